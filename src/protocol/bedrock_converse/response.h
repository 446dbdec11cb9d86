#pragma once

#include <string_view>

#include "core/result.h"
#include "ir/response.h"

namespace sluice::protocol::bedrock_converse {

// Decodes a Converse answer (ConverseResponse: {output: {message: {role, content}}, stopReason,
// usage, metrics, additionalModelResponseFields, ...}) into the IR.
//   - content: text, toolUse (input object -> compact JSON text), reasoningContent
//     (reasoningText {text, signature} -> kReasoning, redactedContent -> kRedactedReasoning), in
//     order. Other blocks (citationsContent, image, document, server-side tool use, ...) fail
//     with kUpstreamProtocol ("cannot translate content block ...").
//   - stopReason per conventions.h finish_reason; stop_sequence from
//     additionalModelResponseFields (wire_json.h stop_sequence).
//   - usage: input = inputTokens + cacheReadInputTokens + cacheWriteInputTokens, cache counts as
//     given, output = outputTokens (totalTokens is not read: it follows from the others).
//   - id, model and created stay empty: Converse answers carry none (the request id is a
//     response header, the model the URL's).
// An error body ({"message"} without `output`) is the upstream's error: errors.h
// error_from_wire without its header (kUpstreamStatus 502; the adapter, which has the
// x-amzn-errortype header and the status, classifies HTTP errors itself). Invalid JSON, a
// non-object body and missing or mistyped fields fail with kUpstreamProtocol. unknown_fields:
// distinct fields of the answer, message, blocks and usage that wire_json.h known:: does not
// list.
Result<ir::Response> decode_response(std::string_view body);

}  // namespace sluice::protocol::bedrock_converse
