#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/result.h"
#include "ir/request.h"
#include "protocol/openai_responses/tool_names.h"

// OpenAI Responses request body (POST /v1/responses) -> IR, for a Responses caller translated to
// an upstream of another protocol. A caller whose upstream also speaks Responses is passed
// through (ingress.h) and never decoded this way. Sans-I/O, stateless, thread-safe. README.md
// has the tables; the inverse is request_encoder.h.
namespace sluice::protocol::openai_responses {

struct DecodeStats {
  // Top-level fields the IR cannot carry (metadata, text, truncation, include, ...).
  std::uint32_t ignored_fields = 0;
  // Hosted tools left out of the translated request (web_search, file_search, ...; the IR has no
  // server tools), and their types, comma-separated, each once, in request order
  // ("web_search,image_generation"): what the caller should be told (x-sluice-dropped-tools).
  std::uint32_t dropped_tools = 0;
  std::string dropped_tool_types;
  // The IR names of the request's tools (namespace and custom tools flattened), which the
  // encoders need to answer in the caller's names.
  ToolNames tool_names;
};

struct DecodeOptions {
  // Reject (400, code unsupported_parameter, param = the field) what would otherwise be ignored
  // and counted: config server.strict_fields.
  bool strict = false;
};

// A Responses request body -> IR.
//   instructions -> system; input as a string -> one user message; input items:
//     message (type "message" or a bare {role, content}): user -> kUser, leading system and
//       developer messages -> system, later ones -> kSystem messages, assistant -> kAssistant;
//       content a string or parts: input_text (and output_text / refusal in assistant
//       messages) -> kText, input_image (image_url: a data URL -> base64, else a URL;
//       detail kept) -> kImage;
//     function_call {call_id, name, arguments} -> kToolCall (id = call_id) in the assistant
//       turn; function_call_output {call_id, output} -> kToolResult (id = call_id) in a user
//       message, consecutive outputs in one message; output a string or input_text /
//       input_image parts;
//     reasoning {id, summary, encrypted_content} -> in the assistant turn, one kReasoning per
//       summary_text (id = the item id; one with empty text when the summary is empty); its
//       encrypted_content is the signature of the last one, or, without any summary text, one
//       kRedactedReasoning (signature = encrypted_content, id = the item id).
//     function_call with `namespace` -> kToolCall named as the namespace's tool is in the IR;
//     custom_tool_call {call_id, name, input, namespace} -> kToolCall with arguments
//       {"input": input}; custom_tool_call_output -> kToolResult like function_call_output;
//     reasoning items may come without `id` (stateless clients such as Codex never send it).
//   Consecutive assistant items (messages, calls, reasoning) form one assistant message.
//   tools [{type:"function", name, description, parameters}] -> tools (strict, defer_loading
//   dropped); {type:"custom", name, description, format} -> a function taking one string
//   `input` (a grammar format's syntax and definition appended to the description);
//   {type:"namespace", name, tools: [function | custom]} -> each member a top-level tool named
//   per tool_names.h (`<namespace>__<tool>`, or a hashed short form); hosted tools (web_search*,
//   file_search, code_interpreter, image_generation, mcp, tool_search) left out and counted in
//   stats.dropped_tools (rejected when options.strict);
//   tool_choice none/auto/required/{type:"function" | "custom", name}; parallel_tool_calls false ->
//   disable_parallel_tool_use; max_output_tokens -> max_tokens; temperature, top_p;
//   reasoning {effort, summary} -> reasoning.enabled, effort, summary; user (else
//   safety_identifier) -> user; stream; text.format {type: text | json_object | json_schema,
//   name and schema (both required for json_schema), description, strict} -> response_format.
// Counted in stats.ignored_fields (rejected when options.strict): text.verbosity and any other
// top-level field except store, stream_options and previous_response_id (the ingress handles
// those), values that ask for nothing (null, truncation "disabled", service_tier "auto",
// include [] or only "reasoning.encrypted_content", background false) and hints that change
// nothing in the answer (prompt_cache_key, client_metadata).
// Errors (kBadRequest with param, OpenAI's wording): invalid JSON, missing model, input not a
// string or array, items or parts of a type the IR cannot carry (input_file, file_id images,
// built-in tool calls, item_reference), tools other than the above (computer_use_preview,
// local_shell, ...), malformed fields.
Result<ir::Request> decode_request(std::string_view body, DecodeStats* stats = nullptr,
                                   const DecodeOptions& options = {});

// Only the tool names of a request body decode_request accepted (stats.tool_names), for an
// encoder made later from the caller's bytes (ingress.h make_stream_encoder). Parses the body;
// empty for a body decode_request would refuse.
ToolNames decode_tool_names(std::string_view body);

}  // namespace sluice::protocol::openai_responses
