#pragma once

#include <string_view>

#include "core/error.h"
#include "core/result.h"
#include "ir/response.h"

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

// stop -> kStop, length -> kLength, tool_calls and function_call -> kToolCalls,
// content_filter -> kContentFilter, anything else -> kOther.
ir::FinishReason finish_reason_from_openai(std::string_view reason);

// An upstream error object ({"message","type","code","param"}, OpenAI's shape, which
// vLLM and most compatible servers copy) as a kUpstreamStatus Error. The status comes
// from a numeric `code` in 400..599 (vLLM) or from `type` (invalid_request_error 400,
// authentication_error 401, permission_error 403, not_found_error or code model_not_found 404,
// rate_limit_error and insufficient_quota 429, server_error 500, else 502); a string `code` becomes
// Error::code().
Error error_from_openai(std::string_view message, std::string_view type, std::string_view code,
                        int numeric_code, std::string_view param);

}  // namespace sluice::protocol::openai_chat
