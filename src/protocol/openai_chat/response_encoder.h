#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/result.h"
#include "ir/response.h"
#include "ir/usage.h"

namespace sluice::protocol::openai_chat {

// IR -> OpenAI Chat Completions answers, for OpenAI callers whose upstream speaks another
// protocol (the inverse of ir_response.h). Sans-I/O, stateless, thread-safe. The streaming
// counterpart is stream_encoder.h; both share the two helpers below. README.md lists what
// Chat Completions cannot carry.

// ir::FinishReason -> finish_reason: kStop and kStopSequence -> "stop" (Chat Completions has
// no field naming the sequence), kLength -> "length", kToolCalls -> "tool_calls",
// kContentFilter and kRefusal -> "content_filter" (the reason OpenAI gives when its own
// policy cut the answer), kPauseTurn, kOther and kUnset -> "stop": OpenAI has no "unknown"
// reason and clients treat "stop" as the neutral end of an answer.
std::string_view finish_reason_to_openai(ir::FinishReason finish);

// Appends OpenAI's usage object:
//   {"prompt_tokens","completion_tokens","total_tokens",
//    "prompt_tokens_details":{"cached_tokens"},"completion_tokens_details":{"reasoning_tokens"}}
// prompt_tokens = IR input (both count cache reads and writes), cached_tokens = cache reads;
// cache writes have no field (they stay inside prompt_tokens). total_tokens saturates instead
// of wrapping.
void append_usage_json(std::string& out, const ir::Usage& usage);

// Encodes a complete answer as a `chat.completion` object:
//   {"id","object":"chat.completion","created","model","choices":[{"index":0,
//    "message":{"role":"assistant","content","reasoning_content"?,"tool_calls"?,"refusal":null},
//    "logprobs":null,"finish_reason"}],"usage"?}
// - id: response.id prefixed "chatcmpl-" unless it already starts with it;
// - content: the kText parts joined (as a stream would deliver them); null when the answer
//   holds tool calls and no text, "" when it holds neither;
// - reasoning_content (the vLLM / DeepSeek field ir_response.h reads; OpenAI itself returns
//   no reasoning text): the kReasoning texts joined, present when kReasoning parts exist.
//   Reasoning signatures and kRedactedReasoning parts have no place in Chat Completions and
//   are left out; `dropped_parts`, when given, is set to the number of parts left out that
//   way (signed reasoning counts once per signature);
// - tool_calls: kToolCall parts in order as {"id","type":"function","function":{"name",
//   "arguments"}} with the arguments as JSON text ("{}" when empty); an empty id becomes
//   "<id>_call_<n>" (n = position among the tool calls), as ir_stream.h does;
// - finish_reason per finish_reason_to_openai(); usage per append_usage_json(), left out when
//   the IR has none.
// Errors (kUpstreamProtocol), never a wrong body: tool arguments that are not JSON; image or
// tool_result parts (not valid in an answer).
Result<std::string> encode_response(const ir::Response& response, std::int64_t created,
                                    std::uint32_t* dropped_parts = nullptr);

// "chatcmpl-" + id, unless id already starts with it (shared with stream_encoder.h).
std::string completion_id(std::string_view id);

}  // namespace sluice::protocol::openai_chat
