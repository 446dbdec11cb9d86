#pragma once

#include <string>
#include <string_view>

#include <boost/json/value.hpp>

#include "core/result.h"

namespace sluice::protocol::openai_chat {

// A decoded OpenAI Chat Completions (or Embeddings) request: the fields the gateway acts
// on, plus the parsed document so it can be re-encoded with rewrites for the upstream.
struct ChatRequest {
  std::string model;
  bool stream = false;
  bool include_usage = false;  // stream_options.include_usage as the caller sent it
  boost::json::value document;
};

// Limits applied while parsing untrusted request JSON.
inline constexpr std::size_t kMaxJsonDepth = 64;

// Validates a /v1/chat/completions body: a JSON object with a non-empty string `model`,
// a non-empty `messages` array, optional boolean `stream`, optional `stream_options`
// object. Errors are kBadRequest with `param` naming the field.
Result<ChatRequest> decode_chat_request(std::string_view body);

// Validates a /v1/embeddings body: `model` and `input` (string, array of strings, array of
// token ids, or array of token arrays; never empty).
Result<ChatRequest> decode_embeddings_request(std::string_view body);

// Serialises the request for the upstream (rewriting `request` in place): `model` replaced by
// `upstream_model`; when `force_include_usage` and the request streams,
// stream_options.include_usage is set so usage can always be metered.
std::string encode_upstream_body(ChatRequest& request, std::string_view upstream_model,
                                 bool force_include_usage);

}  // namespace sluice::protocol::openai_chat
