#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "core/result.h"
#include "event_source.h"
#include "reply.h"
#include "reply_content.h"

namespace sluice::mock {

// What the mock takes from a POST /v1/messages (or /v1/messages/count_tokens) body.
struct AnthropicRequest {
  std::string model;
  bool stream = false;
  // Set when the reply is a tool_use block: "tools" is a non-empty array and tool_choice is
  // not {"type":"none"}. The tool a {"type":"tool","name":..} tool_choice names, or else the
  // first tool's name.
  std::optional<std::string> tool_name;
  // Characters of the system prompt and of all message text / 4 + 1.
  std::uint32_t input_tokens = 0;
};

// Which Anthropic endpoint a body is for: count_tokens takes no max_tokens.
enum class AnthropicEndpoint : std::uint8_t { kMessages, kCountTokens };

// Validates a body as the Messages API does: a JSON object with a string "model", an
// integer "max_tokens" >= 1 (kMessages only) and a non-empty array "messages"; "stream", if
// present, a boolean. Errors are kBadRequest with Anthropic's messages ("max_tokens: Field
// required", ...).
Result<AnthropicRequest> parse_anthropic_request(std::string_view body, AnthropicEndpoint endpoint);

// A "message" object: id msg_mock_<n>, one text block (or one tool_use block), stop_reason
// end_turn (tool_use), usage with input, cache and output tokens.
std::string anthropic_message_body(const AnthropicRequest& request, const ReplySpec& spec);

// The events of a streamed message, each `event: <type>\ndata: <json>\n\n`:
// message_start, content_block_start, ping (kPrelude); one content_block_delta per word
// (text_delta), or three input_json_delta fragments for a tool (kCounted);
// content_block_stop, message_delta, message_stop (kTrailer; message_stop left out with
// spec.omit_done). With spec.stream_error the stream ends after `after` deltas (default
// half of them) with one `error` event instead of the trailer.
std::unique_ptr<EventSource> make_anthropic_stream(const AnthropicRequest& request,
                                                   const ReplySpec& spec);

// POST …/messages: the message or its stream, or a validation error.
Result<Reply> respond_anthropic_messages(std::string_view body, const ReplySpec& spec);

// POST …/messages/count_tokens: {"input_tokens":N}, N as in the message's usage.
Result<Reply> respond_anthropic_count_tokens(std::string_view body);

}  // namespace sluice::mock
