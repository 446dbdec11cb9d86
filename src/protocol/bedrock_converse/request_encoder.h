#pragma once

#include <cstdint>
#include <string>

#include "core/result.h"
#include "ir/request.h"
#include "protocol/claude_thinking.h"
#include "protocol/turns.h"

namespace sluice::protocol::bedrock_converse {

// IR request -> Bedrock Converse request body, for translated traffic (every caller: no caller
// speaks Converse). Converse and ConverseStream take the same body; the model id and the
// choice between them are the URL's (POST /model/{modelId}/converse or /converse-stream), which
// the adapter writes, so neither is in the body. Sans-I/O, stateless, thread-safe. Field names
// and limits follow the Bedrock Runtime service model (botocore service-2.json, 2023-09-30).

// Thinking budgets for an OpenAI-style reasoning effort without an explicit budget (Claude
// models): the same as the Anthropic encoder's (protocol/claude_thinking.h).
using EffortBudgets = protocol::EffortBudgets;

struct EncodeOptions {
  EffortBudgets effort_budgets;
  // The room left for the answer when a Claude thinking budget needs a maxTokens and the
  // request gave none: maxTokens = budget + this (the AI SDK's Bedrock provider does the same
  // with 4096).
  std::uint32_t answer_tokens = 4096;
};

// What the encoder left out because Converse cannot take it (metrics; see the rules below):
// dropped_reasoning (reasoning parts without a signature) and dropped_empty (empty text parts).
using EncodeStats = protocol::DroppedParts;

// The Converse body for `request` sent to model `model` (used only to tell Claude models, whose
// own fields additionalModelRequestFields carries, from the others: conventions.h
// is_claude_model).
//
// Top level:
//   - system: request.system's text parts, then the text of kSystem messages before any other
//     message, as [{text}]; a part with cache_breakpoint is followed by {"cachePoint":{"type":
//     "default"[,"ttl"]}} (ttl "5m" or "1h", Converse's CacheTTL values; others are an error).
//     Omitted when empty.
//   - inferenceConfig: maxTokens (request.max_tokens; 0 is an error), temperature and topP
//     (must lie in [0, 1], the service model's range: an error otherwise, never a clamp),
//     stopSequences (non-empty strings, at most 2500: the service model's limits). Omitted when
//     empty: Converse needs no maxTokens.
//   - toolConfig: tools -> [{toolSpec: {name, description (when non-empty), inputSchema:
//     {json: the parameters JSON object ({"type":"object"} when empty)}}}], a tool with
//     cache_breakpoint followed by a {cachePoint} entry. Names must be Converse tool names
//     (1-64 of [a-zA-Z0-9_-]). toolChoice: auto -> {auto:{}}, required -> {any:{}}, named ->
//     {tool:{name}}; unset -> omitted (the model's default, auto). Converse has no "none"
//     choice: tool_choice none leaves toolConfig out, so the model sees no tool to call, unless
//     the conversation holds tool calls or results, for which Converse requires toolConfig:
//     that is an error ("tool_choice") rather than a request that lets the model call tools.
//     required or named without tools is an error ("tool_choice"). disable_parallel_tool_use
//     has no Converse field and is dropped.
//   - additionalModelRequestFields (the model's own fields, passed through by Converse):
//     top_k -> "top_k" (the name Anthropic's and Mistral's models take). Reasoning, for Claude
//     models only: disabled or effort "none" -> nothing; an explicit budget -> "thinking":
//     {"type":"enabled","budget_tokens"} (raised to Anthropic's minimum, 1024); an effort
//     without a budget (minimal/low/medium/high/xhigh) -> the budget from
//     options.effort_budgets, other efforts an error ("reasoning_effort"); enabled without
//     either -> {"type":"adaptive"}. The budget must stay below maxTokens (Anthropic counts
//     thinking in max_tokens): an effort's budget is lowered to max_tokens - 1 when the caller
//     gave max_tokens (never below 1024); a budget that still does not fit raises maxTokens to
//     budget + max_tokens; without max_tokens, maxTokens = budget + options.answer_tokens.
//     Reasoning for any other model is an error ("reasoning_effort"): each model family names
//     its reasoning fields differently and nothing is dropped silently.
//   - additionalModelResponseFieldPaths ["/delta/stop_sequence"] for Claude models when stop
//     sequences are given, so the answer says which one matched (what the AI SDK's Bedrock
//     provider asks for).
//   - outputConfig: response_format json_schema -> {textFormat: {type: json_schema, structure:
//     {jsonSchema: {schema: the schema as a JSON string, name, description (when given)}}}};
//     strict has no field and is dropped. json_object (no schema-less JSON mode) -> the text
//     "Respond with a single JSON object and nothing else." appended to the system prompt.
//   - user (no Converse field: requestMetadata only labels invocation logs) is dropped.
// Messages:
//   - kUser and kAssistant keep their role; kTool is a user message (Converse carries tool
//     results in user messages). Consecutive messages of the same role are merged into one:
//     Converse requires roles to alternate. Message names are dropped.
//   - kSystem messages before any other message join the system prompt; later ones become user
//     text blocks prefixed "System: " (as the Anthropic encoder does), merged with the user turn
//     around them. Only text is allowed in system messages.
//   - Parts: text -> {text}; image (base64) -> {image: {format (png/jpeg/gif/webp from the media
//     type; others an error), source: {bytes}}}; an s3:// image URL -> {image: {format (from the
//     media type, else the URL's extension), source: {s3Location: {uri}}}}; other URLs are an
//     error (Converse fetches no URLs; send the image as data). kToolCall -> {toolUse:
//     {toolUseId: tool_use_id(id), name, input: the arguments JSON object verbatim ("" counts as
//     {})}}; kToolResult -> {toolResult: {toolUseId: tool_use_id(id), content: [{text} |
//     {image}] ([] when empty), status: "error" when is_error}} (text is sent as text, never
//     re-parsed into a {json} block, so the model reads exactly what the tool wrote);
//     kReasoning with a signature -> {reasoningContent: {reasoningText: {text, signature}}};
//     kRedactedReasoning -> {reasoningContent: {redactedContent: the data}} (a blob: the data is
//     sent as the base64 text it arrived as). A part with cache_breakpoint (a tool result's
//     inner parts included) is followed by a {cachePoint} block. OpenAI's image detail is
//     dropped. The IR has no document parts, so no `document` block is ever written.
//   - Dropped and counted in `stats`: reasoning without a signature (another provider's
//     reasoning; Claude rejects unsigned thinking) and empty text parts (Converse rejects blank
//     text). A message left without content is left out.
//   - Block placement (toolUse only in assistant turns, toolResult in the user turn after it)
//     is the upstream's to enforce: parts keep their order.
// Errors: ErrorKind::kBadRequest, worded for the caller, with param() naming the field:
// max_tokens 0 or, with a thinking budget, beyond 2^32 - 1 ("max_tokens"); temperature or top_p
// outside [0, 1]; an empty stop sequence or more than 2500 ("stop"); reasoning for a model that
// is not Claude or an unknown effort ("reasoning_effort"); tool_choice as above
// ("tool_choice"); a tool with an invalid name or a schema that is not a JSON object
// ("tools[i]"); a cache ttl other than 5m and 1h, a tool call or result without an id, a call
// with an invalid name or arguments that are not a JSON object (or nest too deep), an image
// that cannot be sent, non-text content in a system message, content other than text and
// images in a tool result ("messages"); no message with content left ("messages").
Result<std::string> encode_request(const ir::Request& request, std::string_view model,
                                   const EncodeOptions& options = {}, EncodeStats* stats = nullptr);

}  // namespace sluice::protocol::bedrock_converse
