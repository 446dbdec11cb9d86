#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/result.h"
#include "ir/response.h"

// OpenAI Chat Completions answers (chat.completion objects) <-> IR: decode_response for an
// OpenAI-compatible upstream's answer, encode_response for an OpenAI caller whose upstream speaks
// another protocol. Sans-I/O, stateless, thread-safe. The streaming counterparts are
// stream_decoder.h and stream_encoder.h; conventions.h has what they share. README.md lists
// what Chat Completions cannot carry.
namespace sluice::protocol::openai_chat {

// A non-streaming chat.completion body from an OpenAI-compatible upstream -> IR.
// Sans-I/O, stateless, thread-safe. Only choices[0] is read (encode_request never asks
// for n > 1). Mapping:
//   - message.reasoning_content or message.reasoning (vLLM, DeepSeek, OpenRouter; not
//     OpenAI) -> a leading kReasoning part;
//   - message.content (string, or an array of text parts) -> kText; message.refusal ->
//     kText as well (the IR has no refusal part; finish stays what finish_reason says);
//   - message.tool_calls -> kToolCall parts, arguments kept as the JSON text sent ("{}"
//     when empty);
//   - finish_reason -> finish_reason_from_openai();
//   - usage: prompt_tokens -> input (OpenAI's count already includes cached tokens),
//     completion_tokens -> output, prompt_tokens_details.cached_tokens -> cache_read,
//     completion_tokens_details.reasoning_tokens -> reasoning;
//   - unknown_fields: distinct fields of the root, choice, message, tool calls and usage
//     that known_fields.h does not list (schema drift).
// Errors: invalid JSON (depth > 64 included), a non-object body, missing or empty choices,
// a choice without a message -> kUpstreamProtocol; an {"error":{...}} body ->
// error_from_openai().
Result<ir::Response> decode_response(std::string_view body);

// Encodes a complete answer as a `chat.completion` object:
//   {"id","object":"chat.completion","created","model","choices":[{"index":0,
//    "message":{"role":"assistant","content","reasoning_content"?,"tool_calls"?,"refusal":null},
//    "logprobs":null,"finish_reason"}],"usage"?}
// - id: response.id prefixed "chatcmpl-" unless it already starts with it;
// - content: the kText parts joined (as a stream would deliver them); null when the answer
//   holds tool calls and no text, "" when it holds neither;
// - reasoning_content (the vLLM / DeepSeek field decode_response reads; OpenAI itself returns
//   no reasoning text): the kReasoning texts joined, present when kReasoning parts exist.
//   Reasoning signatures and kRedactedReasoning parts have no place in Chat Completions and
//   are left out; `dropped_parts`, when given, is set to the number of parts left out that
//   way (signed reasoning counts once per signature);
// - tool_calls: kToolCall parts in order as {"id","type":"function","function":{"name",
//   "arguments"}} with the arguments as JSON text ("{}" when empty); an empty id becomes
//   "<id>_call_<n>" (n = position among the tool calls), as stream_decoder.h does;
// - finish_reason per finish_reason_to_openai(); usage per append_usage_json(), left out when
//   the IR has none.
// Errors (kUpstreamProtocol), never a wrong body: tool arguments that are not JSON; image or
// tool_result parts (not valid in an answer).
Result<std::string> encode_response(const ir::Response& response, std::int64_t created,
                                    std::uint32_t* dropped_parts = nullptr);

}  // namespace sluice::protocol::openai_chat
