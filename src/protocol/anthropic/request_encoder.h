#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/result.h"
#include "ir/request.h"
#include "protocol/claude_thinking.h"
#include "protocol/turns.h"

namespace sluice::protocol::anthropic {

// IR request -> Anthropic Messages request body (POST /v1/messages), for translated traffic: a
// caller speaking another protocol (OpenAI, Gemini) whose route's upstream speaks Anthropic.
// The inverse of decode_request (request_decoder.h). Sans-I/O, stateless, thread-safe.

// Thinking budgets for an OpenAI-style reasoning effort without an explicit budget
// (protocol/claude_thinking.h).
using EffortBudgets = protocol::EffortBudgets;

struct EncodeOptions {
  // max_tokens when the request has none (Anthropic requires the field; OpenAI and Gemini do
  // not). Must be at least 1.
  std::uint32_t default_max_tokens = 4096;
  EffortBudgets effort_budgets;
  // Models that take only adaptive thinking (Claude Opus 4.7 and later answer 400 to
  // budget_tokens): reasoning becomes {"type":"adaptive"} plus output_config.effort, and
  // budgets (explicit or from effort_budgets) are not sent.
  bool adaptive_thinking = false;
};

// What the encoder left out because Anthropic cannot take it (metrics; see the rules below):
// dropped_reasoning (reasoning parts without a signature) and dropped_empty (empty text parts).
using EncodeStats = protocol::DroppedParts;

// The /v1/messages body for `request`, with `model` = `upstream_model` (non-empty) and
// "stream":true when `stream` (request.stream is ignored in favour of the argument).
//
// Top level:
//   - max_tokens = request.max_tokens, or options.default_max_tokens; 0 is an error.
//   - system = request.system's text parts, then the text of Role::kSystem messages that come
//     before any other message: a string for a single part without cache_control, else an
//     array of text blocks, cache_breakpoint / cache_ttl -> cache_control {"type":"ephemeral"
//     [,"ttl"]}. Omitted when empty.
//   - tools -> {name, description (when non-empty), input_schema: the parameters JSON text
//     ({"type":"object"} when empty), cache_control}. The schema must be a JSON object.
//   - tool_choice: auto -> {type:auto}, required -> {type:any}, named -> {type:tool,name},
//     none -> {type:none}; disable_parallel_tool_use=true is carried on auto/any/tool. Unset
//     with disable_parallel_tool_use and tools (OpenAI parallel_tool_calls=false) ->
//     {type:auto, disable_parallel_tool_use:true}.
//   - temperature and top_p must lie in [0, 1] (Anthropic's range; OpenAI allows temperature up
//     to 2): anything else is an error, never a clamp. top_k as given. stop -> stop_sequences
//     (Anthropic documents no limit on their number). user -> metadata.user_id.
//   - reasoning: disabled, or effort "none" -> no thinking field. An explicit budget ->
//     thinking {type:enabled, budget_tokens} (raised to Anthropic's minimum, 1024). An effort
//     without a budget (OpenAI reasoning_effort minimal/low/medium/high/xhigh) -> the budget
//     from options.effort_budgets; any other effort is an error. Enabled without budget or
//     effort (what decode_request makes of {type:adaptive}) -> {type:adaptive}.
//     Anthropic needs budget_tokens < max_tokens (both count thinking): a budget from an
//     effort is first lowered to max_tokens - 1 when the caller gave max_tokens (their output
//     bound holds), never below 1024; a budget that still does not fit raises max_tokens to
//     budget + max_tokens, so the answer keeps the room that was asked for.
//     With options.adaptive_thinking: enabled -> {type:adaptive}, and an effort ->
//     output_config {effort}: minimal -> low, low/medium/high/xhigh as they are.
//   - response_format: json_schema -> output_config {format: {type:json_schema, schema}} (in
//     the same output_config as the effort; name, description and strict have no Anthropic
//     field); json_object (Anthropic has no schema-less JSON mode) -> the text "Respond with a
//     single JSON object and nothing else." appended to the system prompt; text -> nothing.
// Messages:
//   - kUser and kAssistant keep their role; kTool (the OpenAI decoder never makes it: it folds
//     tool results into user messages) is a user message. Consecutive messages of the same
//     role are merged into one (the API itself combines consecutive turns; merging keeps the
//     body valid for stricter Anthropic-compatible servers). Message names are dropped.
//   - kSystem messages before any other message join the system prompt; later ones (OpenAI
//     allows system messages mid-conversation, Anthropic's Messages API has no such role) become
//     user text blocks, each text prefixed with "System: " so the model sees whose words they
//     are, merged with the user turn around them. Only text is allowed in system messages.
//   - Parts: text -> {type:text}; image -> {type:image, source: {type:url, url} or {type:base64,
//     media_type, data}} (media types jpeg/png/gif/webp only; OpenAI's detail is dropped);
//     kToolCall -> {type:tool_use, id: tool_use_id(id), name, input: the arguments JSON text
//     verbatim, which must be a JSON object}; kToolResult -> {type:tool_result, tool_use_id:
//     tool_use_id(id), content (a string for one plain text part, else text/image blocks;
//     omitted when empty), is_error when true}; kReasoning with a signature -> {type:thinking,
//     thinking, signature}; kRedactedReasoning -> {type:redacted_thinking, data}. cache_control
//     is kept on text, image, tool_use and tool_result blocks. tool_use_id() (conventions.h) is
//     deterministic, so a tool_result always names the id its tool_use was sent with.
//   - Dropped and counted in `stats`: reasoning without a signature (another provider's
//     reasoning: Anthropic rejects unsigned thinking blocks) and empty text parts (the API
//     rejects empty text blocks). A message left without content is left out; a single plain
//     text part is sent as string content.
//   - Block placement rules (tool_use only in assistant turns, tool_result first in the user
//     turn after it, thinking rules) are the upstream's to enforce: parts keep their order.
// Errors: ErrorKind::kBadRequest, worded for the caller, with param() naming the field:
// max_tokens 0; temperature or top_p outside [0, 1]; an unknown reasoning effort
// ("reasoning_effort"); budget + max_tokens beyond 2^32 - 1; a tool without a name or with a
// schema that is not a JSON object ("tools[i]"); a tool call or tool result without an id, tool
// call arguments that are empty, not JSON, not an object or nested too deep, an image with
// another media type, non-text content in a system message, content other than text and
// images in a tool result ("messages"); no message with content left ("messages").
Result<std::string> encode_request(const ir::Request& request, std::string_view upstream_model,
                                   bool stream, const EncodeOptions& options = {},
                                   EncodeStats* stats = nullptr);

}  // namespace sluice::protocol::anthropic
