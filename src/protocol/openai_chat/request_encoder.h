#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/result.h"
#include "ir/request.h"

// IR -> OpenAI Chat Completions request body, for an OpenAI-compatible upstream of a caller
// speaking another protocol (the passthrough path uses envelope.h instead). The inverse of
// request_decoder.h. Sans-I/O, stateless, thread-safe.
namespace sluice::protocol::openai_chat {

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

}  // namespace sluice::protocol::openai_chat
