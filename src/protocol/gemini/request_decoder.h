#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/result.h"
#include "ir/request.h"

// The generateContent / streamGenerateContent request body -> IR, for a Gemini caller translated
// to an upstream of another protocol. The model and the stream flag are not in the body: they
// come from the URL (models/{model}:generateContent or :streamGenerateContent), so decode leaves
// `model` empty and `stream` false. README.md has the mapping tables. The inverse is
// request_encoder.h.
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

}  // namespace sluice::protocol::gemini
