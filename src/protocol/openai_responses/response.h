#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "codec/json_writer.h"
#include "core/result.h"
#include "ir/response.h"
#include "ir/usage.h"
#include "protocol/openai_responses/tool_names.h"

// IR <-> OpenAI Responses `response` objects (the non-streaming answer), for translated
// traffic. Sans-I/O, stateless, thread-safe. README.md has the tables.
namespace sluice::protocol::openai_responses {

// A `response` object from a Responses upstream -> IR.
//   output items in order: message -> kText per output_text (a refusal part's text too);
//   function_call -> kToolCall {id = call_id, name, arguments ("{}" when empty)};
//   reasoning -> kReasoning per summary_text (id = the item id), encrypted_content as the
//   signature of the last one, or without summary text a kRedactedReasoning (as
//   request_decoder.h decode_request reads reasoning input items).
//   status completed -> kToolCalls when it holds a function call, else kStop; incomplete with
//   incomplete_details.reason max_output_tokens -> kLength, content_filter -> kContentFilter;
//   usage per conventions.h; created_at -> created.
// Errors: kUpstreamProtocol for invalid JSON, a non-object, output items the IR cannot carry
// (built-in tool calls such as web_search_call), a status other than completed / incomplete;
// a failed response or an {"error":{...}} body -> its error (conventions.h error_from_wire).
// unknown_fields: distinct fields of the response, its output items, content parts and usage
// that conventions.h known:: does not list (schema drift).
Result<ir::Response> decode_response(std::string_view body);

// IR -> a `response` object, in the key order of recorded answers:
//   {"id","object":"response","created_at","status","completed_at","error":null,
//    "incomplete_details","instructions":null,"max_output_tokens":null,"model","output":[..],
//    "parallel_tool_calls":true,"previous_response_id":null,"reasoning":{..},"store":false,
//    "temperature":null,"text":{"format":{"type":"text"}},"tool_choice":"auto","tools":[],
//    "top_p":null,"truncation":"disabled","usage":{..},"metadata":{}}
// id per conventions.h response_id(); status "incomplete" with incomplete_details.reason for
// kLength (max_output_tokens) and kContentFilter (content_filter), otherwise "completed".
// Output items: consecutive kText parts -> one message item, one output_text per part;
// consecutive reasoning parts with one id -> one reasoning item (summary_text per non-empty
// kReasoning, encrypted_content = the signature, or a kRedactedReasoning's data); kToolCall ->
// function_call {id "fc_..", call_id = the IR id (generated when empty), name, arguments}.
// Item ids the IR does not carry are derived from the response id and the output index.
// usage is null when the IR has none. Errors (kUpstreamProtocol): image or tool_result
// parts.
// `names` (the request's tools, request_decoder.h stats.tool_names; null: none to restore): a
// call of a namespace's tool is a function_call with the tool's own `name` and its `namespace`;
// a call of a custom tool is {"id":"ctc_..","type":"custom_tool_call","status":"completed",
// "call_id","input","name"[,"namespace"]} with input = tool_names.h custom_tool_input.
Result<std::string> encode_response(const ir::Response& response, std::int64_t created,
                                    const ToolNames* names = nullptr);

// What response objects and stream events share (stream_encoder.h writes the same objects).
struct ResponseEnvelope {
  std::string_view id;  // already a response id (response_id())
  std::string_view model;
  std::int64_t created = 0;
  std::string_view status;             // in_progress, completed, incomplete, failed
  std::string_view incomplete_reason;  // with status incomplete
};
// The response object up to and including `"output":[`; the caller writes the items.
void begin_response_object(codec::JsonWriter& w, const ResponseEnvelope& envelope);
// `]` and the rest of the object after the output; usage null when `usage` is null.
void end_response_object(codec::JsonWriter& w, const ir::Usage* usage);
// {"type":"output_text","annotations":[],"logprobs":[],"text":..}
void write_output_text(codec::JsonWriter& w, std::string_view text);
void write_output_text(codec::JsonWriter& w, const codec::EscapedText& text);
// {"id","type":"function_call","status","arguments","call_id","name"[,"namespace"]}, the
// namespace written when not empty.
void write_function_call_item(codec::JsonWriter& w, std::string_view id, std::string_view status,
                              std::string_view arguments, std::string_view call_id,
                              std::string_view name, std::string_view space = {});
void write_function_call_item(codec::JsonWriter& w, std::string_view id, std::string_view status,
                              const codec::EscapedText& arguments, std::string_view call_id,
                              std::string_view name, std::string_view space = {});
// {"id","type":"custom_tool_call","status","call_id","input","name"[,"namespace"]}.
void write_custom_tool_call_item(codec::JsonWriter& w, std::string_view id, std::string_view status,
                                 std::string_view input, std::string_view call_id,
                                 std::string_view name, std::string_view space);

// "<prefix>_<response id without resp_>_<index>": the item ids of a translated answer (shared
// with stream_encoder.h).
std::string item_id(std::string_view prefix, std::string_view response_id, std::size_t index);

}  // namespace sluice::protocol::openai_responses
