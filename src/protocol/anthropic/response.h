#pragma once

#include <string>
#include <string_view>

#include "core/result.h"
#include "ir/response.h"

namespace sluice::protocol::anthropic {

// Encodes a complete answer as an Anthropic `message` object:
//   {"id","type":"message","role":"assistant","model","content":[...],"stop_reason",
//    "stop_sequence","usage":{"input_tokens","cache_creation_input_tokens",
//    "cache_read_input_tokens","output_tokens"}}
// Content: kText -> text, kReasoning -> thinking {thinking, signature}, kRedactedReasoning ->
// redacted_thinking {data}, kToolCall -> tool_use {id, name, input}; other part kinds are not
// valid in a response and fail. Ids follow conventions.h (message_id, tool_use_id; an empty tool
// id becomes tool_use_id("<message id>_<n>")). stop_reason per conventions.h stop_reason();
// stop_sequence is set only for kStopSequence. A response without usage reports zeros.
//
// Not emitted because the IR does not carry them: usage.cache_creation (5m / 1h split),
// service_tier, inference_geo, stop_details, container, context_management, tool_use.caller,
// text citations.
//
// Usage whose cache counts exceed its input cannot be expressed exactly: it is written clamped
// (conventions.h to_wire_usage_clamped) and `*usage_clamped` is set, so a paid answer still
// reaches the caller and metering counts the anomaly.
// Errors (kUpstreamProtocol), never a wrong body: tool arguments that are not a JSON object
// ("" counts as {}).
Result<std::string> encode_response(const ir::Response& response, bool* usage_clamped = nullptr);

// Decodes an Anthropic `message` object (a non-streaming /v1/messages answer) into the IR.
// usage: input = input_tokens + cache_creation_input_tokens + cache_read_input_tokens.
// tool_use input objects become compact JSON text. Content blocks the IR cannot carry
// (server_tool_use, web_search_tool_result, ...) fail with kUpstreamProtocol ("cannot translate
// content block ..."), as do invalid JSON, a non-object body and missing or mistyped fields.
// unknown_fields: distinct fields of the message, content blocks and usage that wire_json.h
// known:: does not list (schema drift).
Result<ir::Response> decode_response(std::string_view body);

}  // namespace sluice::protocol::anthropic
