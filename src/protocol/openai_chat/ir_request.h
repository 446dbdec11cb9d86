#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/result.h"
#include "ir/request.h"

namespace sluice::protocol::openai_chat {

// IR <-> OpenAI Chat Completions request bodies, for translated traffic (a caller speaking
// another protocol, an OpenAI-compatible upstream). The passthrough path uses
// chat_request.h instead. Sans-I/O, stateless, thread-safe.

struct EncodeOptions {
  // Send the output limit as `max_completion_tokens` instead of `max_tokens`. OpenAI
  // deprecated `max_tokens` and its reasoning models (o-series, gpt-5) reject it with
  // 400 unsupported_parameter; vLLM, Ollama and older OpenAI-compatible servers know only
  // `max_tokens`. The default suits the widest set of servers; a provider config that
  // targets api.openai.com should set this.
  bool use_max_completion_tokens = false;
};

// The /v1/chat/completions body for `request`, with `model` set to `upstream_model`.
// Never fails: what OpenAI cannot express is left out, as listed here.
//   - system parts -> one leading {"role":"system"} message (string content for one part,
//     an array of text parts for several).
//   - user text/image parts -> content (a string for a single text part, else an array of
//     text and image_url parts; base64 images become data: URLs).
//   - kToolResult parts (in user or tool messages) -> one {"role":"tool"} message each, in
//     order, before the rest of that message's content (OpenAI requires tool messages
//     directly after the assistant's tool_calls). Only the result's text parts are sent:
//     OpenAI tool messages cannot carry images; is_error has no OpenAI field.
//   - assistant text -> content; kToolCall -> tool_calls; reasoning and redacted reasoning
//     are dropped (Chat Completions has no input field for them).
//   - tools, tool_choice, parallel_tool_calls=false (only with tools), max_tokens (see
//     EncodeOptions), temperature, top_p, stop, user, reasoning_effort.
//   - response_format: json_object -> {"type":"json_object"}; json_schema ->
//     {"type":"json_schema","json_schema":{name ("response" when the caller's protocol has
//     none), description, schema, strict (only when given)}}; text -> nothing (the default).
//   - dropped: top_k (not an OpenAI parameter), reasoning.budget_tokens, cache breakpoints
//     (OpenAI caches prompts automatically).
//   - `stream`: "stream":true and "stream_options":{"include_usage":true}, so usage can be
//     metered; request.stream is ignored in favour of the argument.
std::string encode_request(const ir::Request& request, std::string_view upstream_model, bool stream,
                           const EncodeOptions& options = {});

struct DecodeOptions {
  // Reject (400, code unsupported_parameter, param = the field) any field decode_request would
  // otherwise ignore and count: config `server.strict_fields`.
  bool strict = false;
};

struct DecodeStats {
  // Top-level fields that were ignored because the IR cannot carry them (schema drift metric).
  std::uint32_t ignored_fields = 0;
};

// The inverse of encode_request, for an OpenAI Chat Completions body. Leading system and
// developer messages become request.system; later ones become Role::kSystem messages.
// Each run of consecutive tool messages becomes one Role::kUser message of kToolResult
// parts, and a user message directly after it is merged into that message (the shape
// Anthropic needs, and what encode_request takes apart). reasoning_effort sets
// reasoning.enabled and reasoning.effort; max_completion_tokens wins over max_tokens; user,
// else safety_identifier, -> user. response_format {type: text | json_object | json_schema,
// json_schema: {name (required), description, schema, strict}} -> response_format (a
// json_schema without a schema is json_object: any JSON).
// Refused (kBadRequest, code unsupported_parameter), because no other provider can honour
// them: n above 1, logprobs true, top_logprobs above 0.
// Ignored and counted in stats->ignored_fields (rejected when options.strict): every other
// top-level field (seed, penalties, logit_bias, metadata, store true, service_tier,
// prediction, modalities, audio, functions, unknown fields) except those whose value asks for
// nothing (null, n 1, logprobs false, penalties 0, store false, service_tier "auto");
// stream_options is read by the ingress. An assistant refusal is dropped.
// Errors (kBadRequest, with param): invalid JSON (depth > 64 included), a body that is not
// an object, missing model or messages, unknown roles, content parts other than text and
// image_url (audio and files are not in the IR), malformed tool calls, a malformed
// response_format (worded like OpenAI: "Missing required parameter: '...'.").
Result<ir::Request> decode_request(std::string_view body, DecodeStats* stats = nullptr,
                                   const DecodeOptions& options = {});

}  // namespace sluice::protocol::openai_chat
