#pragma once

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
//   - dropped: top_k (not an OpenAI parameter), reasoning.budget_tokens, cache breakpoints
//     (OpenAI caches prompts automatically).
//   - `stream`: "stream":true and "stream_options":{"include_usage":true}, so usage can be
//     metered; request.stream is ignored in favour of the argument.
std::string encode_request(const ir::Request& request, std::string_view upstream_model, bool stream,
                           const EncodeOptions& options = {});

// The inverse of encode_request, for an OpenAI Chat Completions body. Leading system and
// developer messages become request.system; later ones become Role::kSystem messages.
// Each run of consecutive tool messages becomes one Role::kUser message of kToolResult
// parts, and a user message directly after it is merged into that message (the shape
// Anthropic needs, and what encode_request takes apart). reasoning_effort sets
// reasoning.enabled and reasoning.effort; max_completion_tokens wins over max_tokens.
// Dropped without error: n, seed, response_format, logprobs, penalties, logit_bias,
// stream_options, metadata, store, service_tier, assistant refusal, and any unknown field.
// Errors (kBadRequest, with param): invalid JSON (depth > 64 included), a body that is not
// an object, missing model or messages, unknown roles, content parts other than text and
// image_url (audio and files are not in the IR), malformed tool calls.
Result<ir::Request> decode_request(std::string_view body);

}  // namespace sluice::protocol::openai_chat
