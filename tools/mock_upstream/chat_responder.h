#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "event_source.h"
#include "reply.h"
#include "reply_content.h"

namespace sluice::mock {

// What the mock takes from a POST /chat/completions body.
struct ChatRequest {
  std::string model;
  bool stream = false;
  // stream_options.include_usage: add a usage-only chunk and "usage":null on every other.
  bool include_usage = false;
  // Set when the reply is a tool call: the request has a non-empty "tools" array and
  // tool_choice is not "none". The first tool's function.name, or the function named by
  // a {"type":"function","function":{"name":..}} tool_choice.
  std::optional<std::string> tool_name;
  // Deterministic estimate: characters of all message text / 4 + 1.
  std::uint32_t prompt_tokens = 0;
  // Per message i: a hash of messages [0, i] and their tokens (the prompt cache's prefixes).
  std::vector<std::uint64_t> prefix_hashes;
  std::vector<std::uint32_t> prefix_tokens;
  // What the simulated prompt cache served (usage.prompt_tokens_details.cached_tokens).
  std::uint32_t cached_tokens = 0;
};

// Parses and validates a chat completion request body. Errors are kBadRequest with
// OpenAI's message and param ("model", "messages", ...).
Result<ChatRequest> parse_chat_request(std::string_view body);

// A chat.completion object (non-stream response body).
std::string chat_completion_body(const ChatRequest& request, const ReplySpec& spec);

// A chat.completion whose one choice is an assistant message with this text content,
// finish_reason "stop" and usage 1 + 1 tokens.
std::string text_completion_body(std::string_view id, std::int64_t created, std::string_view model,
                                 std::string_view content);

// The chat.completion.chunk events of a streamed reply, ending with "data: [DONE]" unless
// spec.omit_done.
// Text: a role chunk (kPrelude), `words` content chunks ("Mock reply w1", " w2", ...;
// kCounted), a finish_reason "stop" chunk, the usage chunk if requested, [DONE] (kTrailer).
// Tool call: the role chunk carries the tool call header (id, type, name, arguments ""),
// then three argument fragments (kCounted), finish_reason "tool_calls", usage, [DONE].
std::unique_ptr<EventSource> make_chat_stream(const ChatRequest& request, const ReplySpec& spec);

// POST …/chat/completions: the completion or its stream, or a validation error.
Result<Reply> respond_chat(std::string_view body, const ReplySpec& spec);

}  // namespace sluice::mock
