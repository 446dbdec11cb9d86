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

// What the mock takes from a Bedrock Runtime Converse / ConverseStream body
// (docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_Converse.html).
struct BedrockRequest {
  // Set when the reply is a toolUse block: toolConfig.tools has a toolSpec, and the
  // conversation does not end with a toolResult unless toolChoice is {"any":{}} or
  // {"tool":{"name":..}}. The tool a {"tool":{"name":..}} choice names, or else the first
  // toolSpec's name.
  std::optional<std::string> tool_name;
  // Characters of the text blocks of "system" and of every message's content / 4 + 1.
  std::uint32_t input_tokens = 0;
};

// Which operation a body is for.
enum class BedrockOperation : std::uint8_t { kConverse, kConverseStream };

// Validates a body as Bedrock does: a JSON object with a non-empty array "messages" whose
// entries are objects with a role "user" or "assistant" (the first one "user") and a
// non-empty array "content"; "inferenceConfig.maxTokens", if present, an integer >= 1. Errors
// are kBadRequest with Bedrock's wording (README.md lists them).
Result<BedrockRequest> parse_bedrock_request(std::string_view body);

// Checks a model id taken from the path (already percent-decoded): 1..2048 characters of
// letters, digits and - _ . : / (foundation models, inference profiles and ARNs). Otherwise a
// kBadRequest "The provided model identifier is invalid.".
Result<void> check_bedrock_model_id(std::string_view model_id);

// A ConverseResponse, keys in the order the service sends them (alphabetical):
// {"metrics":{"latencyMs":L},"output":{"message":{"content":[{"text":"Mock reply w1 .. wN"}],
// "role":"assistant"}},"stopReason":"end_turn","usage":{"inputTokens":P,"outputTokens":O,
// "totalTokens":P+O}}, or one toolUse block and stopReason "tool_use". L is
// spec.latency_ms.
std::string bedrock_converse_body(const BedrockRequest& request, const ReplySpec& spec);

// The messages of a ConverseStream reply, each one binary application/vnd.amazon.eventstream
// message (codec/eventstream_writer.h) whose JSON payload carries the service's "p" padding:
// messageStart (kPrelude; for a tool also contentBlockStart); one contentBlockDelta per word,
// or three toolUse input fragments (kCounted); contentBlockStop, messageStop and metadata
// (kTrailer; messageStop and metadata left out with spec.omit_done). With spec.stream_error
// the stream ends after `after` deltas (default half of them) with one exception message of
// that type instead of the trailer.
std::unique_ptr<EventSource> make_bedrock_stream(const BedrockRequest& request,
                                                 const ReplySpec& spec);

// POST …/model/{modelId}/converse or …/converse-stream: the reply, or a validation error.
// `model_id` is the decoded path segment.
Result<Reply> respond_bedrock(std::string_view body, std::string_view model_id,
                              const ReplySpec& spec, BedrockOperation operation);

}  // namespace sluice::mock
