#pragma once

#include <string>
#include <string_view>

#include "core/result.h"
#include "ir/response.h"

// A complete GenerateContentResponse (generateContent, non-streaming) <-> IR.
namespace sluice::protocol::gemini {

// Decodes an upstream's answer: candidates[0] (the IR carries one candidate; translated
// requests never ask for more), its content.parts per parts.h read_parts (function calls
// without FunctionCall.id get answer_call_id(responseId, k)), finishReason per
// conventions.h finish_reason (STOP with a function call -> kToolCalls), usageMetadata per
// from_wire_usage, id = responseId, model = modelVersion. No candidate: promptFeedback.blockReason
// -> finish per block_reason, otherwise kOther (never an invented clean finish).
// An {"error":{...}} body becomes its Error (errors.h error_from_wire). Parts the IR cannot
// carry (inlineData, executableCode, ...) and malformed JSON fail with kUpstreamProtocol.
// unknown_fields: distinct fields of the answer, candidates[0], its content and parts and
// usageMetadata that wire_json.h known:: does not list, in either spelling (schema drift).
Result<ir::Response> decode_response(std::string_view body);

// Encodes an answer for a Gemini caller:
//   {"candidates":[{"content":{"parts":[...],"role":"model"},"finishReason":..,"index":0}],
//    "usageMetadata":{..},"modelVersion":<model>,"responseId":<id>}
// Parts per parts.h write_parts with FunctionCall.id written (ids the caller may send back);
// finishReason per finish_reason_name; usage per to_wire_usage (zeros without usage). Usage
// that cannot be expressed is clamped and `*usage_clamped` set. Errors (kUpstreamProtocol):
// tool arguments that are not a JSON object, image or tool-result parts.
Result<std::string> encode_response(const ir::Response& response, bool* usage_clamped = nullptr);

}  // namespace sluice::protocol::gemini
