#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/result.h"
#include "ir/request.h"

// The generateContent / streamGenerateContent request body <-> IR. The model and the stream
// flag are not in the body: they come from the URL (models/{model}:generateContent or
// :streamGenerateContent), so decode leaves `model` empty and `stream` false and encode
// writes neither. README.md has the mapping tables.
namespace sluice::protocol::gemini {

struct DecodeStats {
  // Fields that were ignored because the IR cannot carry them and they do not change what
  // the answer means (safetySettings, presencePenalty, seed, ...): a schema-drift metric.
  std::uint32_t ignored_fields = 0;
};

struct DecodeOptions {
  // Reject ("'<field>' cannot be translated for this model's provider", param = the field) what
  // would otherwise be ignored and counted: config server.strict_fields.
  bool strict = false;
};

// Decodes a GenerateContentRequest body for translation to an upstream of another protocol.
// Both JSON spellings are accepted (camelCase and proto snake_case, as the API does).
//   contents[] {role user|model (absent = user), parts[]} -> messages (user -> kUser, model ->
//     kAssistant), one message per Content, parts per parts.h read_parts. A functionResponse
//     with an id answers the call with that id; without one, the first unanswered
//     functionCall of the same name in the latest Content with calls before it, then in
//     earlier ones (the order Gemini pairs them in), or when all have an answer, the same
//     way among those answered least often; one that answers no call of its name is an
//     error. Calls
//     without an id get request_call_id(content, part).
//   systemInstruction {parts: text only} -> system.
//   tools[].functionDeclarations[] {name, description, parameters (an OpenAPI Schema,
//     converted to JSON Schema as responseSchema is below) |
//     parametersJsonSchema (verbatim)} -> tools; a declaration without either ->
//     {"type":"object"}. Other tools (googleSearch, codeExecution, urlContext, ...) and
//     cachedContent are errors: they run inside Google's API.
//   toolConfig.functionCallingConfig {mode, allowedFunctionNames}: AUTO -> auto, NONE ->
//     none, ANY -> required, ANY with one name -> named, ANY (or VALIDATED) with several names
//     -> required / auto with the tools reduced to those names, VALIDATED -> auto.
//   generationConfig: maxOutputTokens -> max_tokens, temperature, topP, topK, stopSequences ->
//     stop; thinkingConfig: thinkingBudget 0 -> reasoning disabled (budget 0), -1 ->
//     enabled (dynamic), N -> enabled with budget N; thinkingLevel MINIMAL/LOW/MEDIUM/HIGH ->
//     enabled with that effort (lower case); includeThoughts alone -> enabled.
//     responseMimeType "application/json" -> response_format: with responseJsonSchema (JSON
//     Schema, as it is) kJsonSchema, with responseSchema (Gemini's OpenAPI Schema: type names
//     lower-cased, nullable: true -> "null" added to the type, propertyOrdering dropped)
//     kJsonSchema, with neither kJsonObject; "text/plain" (or none) -> kText. Both schemas, a
//     schema without the JSON mime type, and any other mime type (text/x.enum, ...) are
//     errors, as is candidateCount above 1 (the IR has one candidate).
//     Other generationConfig fields are ignored and counted.
//   safetySettings and unknown top-level fields are ignored and counted. Fields whose value is
//   null count as absent. With options.strict every ignored field is an error instead.
// Errors are kBadRequest, "* GenerateContentRequest.<field>: <problem>", param() = the field.
Result<ir::Request> decode_request(std::string_view body, DecodeStats* stats = nullptr,
                                   const DecodeOptions& options = {});

// Thinking budgets for an effort without a budget (OpenAI reasoning_effort; Gemini's
// thinkingLevel decodes to an effort too). Budgets work on every thinking model (Gemini 2.5
// ranges from 128 to 24576 or 32768; Gemini 3 takes budgets for compatibility), thinkingLevel
// only on Gemini 3.
struct EffortBudgets {
  std::uint32_t minimal = 128;
  std::uint32_t low = 1024;
  std::uint32_t medium = 8192;
  std::uint32_t high = 24576;
  std::uint32_t xhigh = 24576;
};

struct EncodeOptions {
  EffortBudgets effort_budgets;
};

// What encode_request left out because Gemini cannot take it (metrics).
struct EncodeStats {
  std::uint32_t dropped_empty = 0;     // empty text parts and messages left without parts
  std::uint32_t dropped_redacted = 0;  // redacted (encrypted) reasoning of another provider
};

// IR -> GenerateContentRequest body, for a Gemini upstream (translated traffic).
//   system (and the text of kSystem messages before any other message) -> systemInstruction;
//   later kSystem messages -> user text "System: ...". kUser and kTool -> role user,
//   kAssistant -> role model; one Content per message (messages left without parts are left
//   out). Parts per parts.h write_parts; tool results are paired by name: functionResponse
//   gets the name of the latest tool call with the same IR id before it, and results of the
//   same name are put in the order decode_request pairs them in (the latest message with calls
//   first, in order within it), unless one of them repeats an answer; ids are
//   never sent (the API rejects FunctionCall.id and FunctionResponse.id in requests).
//   tools -> [{"functionDeclarations":[{name, description, parametersJsonSchema}]}] (JSON
//   Schema as given; left out when it is {"type":"object"} or empty: a function without
//   parameters).
//   tool_choice: auto -> AUTO, none -> NONE, required -> ANY, named -> ANY with
//   allowedFunctionNames [name]; disable_parallel_tool_use has no Gemini equivalent.
//   generationConfig: maxOutputTokens, temperature, topP, topK, stopSequences; reasoning
//   enabled -> thinkingConfig {includeThoughts: true[, thinkingBudget]} (budget from
//   budget_tokens, else from the effort via options.effort_budgets; effort "none" -> budget
//   0); disabled with budget 0 -> {thinkingBudget: 0}; disabled otherwise -> nothing.
//   response_format: json_object -> responseMimeType "application/json"; json_schema -> that
//   and responseJsonSchema (the JSON Schema as it is; name, description and strict have no
//   Gemini field); text -> nothing.
//   user is dropped (Gemini has no end-user field).
// Errors (kBadRequest, param() names the field): a tool result whose call is not in the
// conversation, tool call arguments that are not a JSON object, non-text system content,
// tool results with content other than text and base64 images, an unknown effort, no
// content left.
Result<std::string> encode_request(const ir::Request& request, const EncodeOptions& options = {},
                                   EncodeStats* stats = nullptr);

}  // namespace sluice::protocol::gemini
