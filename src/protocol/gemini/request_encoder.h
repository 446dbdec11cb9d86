#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/result.h"
#include "ir/request.h"

// IR -> generateContent / streamGenerateContent request body, for a Gemini upstream (translated
// traffic). The model and the stream flag are not in the body: the adapter writes them into the
// URL (models/{model}:generateContent or :streamGenerateContent). README.md has the mapping
// tables. The inverse is request_decoder.h.
namespace sluice::protocol::gemini {

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
