#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include <boost/json/value.hpp>

#include "core/result.h"
#include "protocol/ingress.h"

namespace sluice::protocol::openai_chat {

// A decoded OpenAI Chat Completions (or Embeddings) request: the fields the gateway acts
// on, and where they sit in the caller's bytes so the upstream body can be produced by
// splicing instead of re-serialising (a 400 KB prompt is copied, not re-encoded).
// Holds a view of the body: the body must outlive the request.
struct ChatRequest {
  std::string model;
  bool stream = false;
  bool include_usage = false;  // stream_options.include_usage as the caller sent it
  // A top-level stream_options member, null included.
  bool has_stream_options = false;
  std::string_view body;
  // Byte range of the top-level "model" value (quotes included); valid when `spliceable`
  // (the value had no escapes and "model" appeared once).
  std::size_t model_begin = 0;
  std::size_t model_end = 0;
  bool spliceable = false;
  std::size_t object_open = 0;  // offset of the top-level '{'

  // The parsed document, built on first use (the mock provider, rare rewrites).
  const boost::json::value& document() const;

 private:
  mutable std::optional<boost::json::value> document_;
};

// Limits applied while parsing untrusted request JSON.
inline constexpr std::size_t kMaxJsonDepth = 64;

// Validates a /v1/chat/completions body: a JSON object with a non-empty string `model`,
// a non-empty `messages` array of objects with a `role`, optional boolean `stream`,
// optional `stream_options` object with a boolean `include_usage`. Errors are kBadRequest
// with `param` naming the field. One pass, no DOM.
Result<ChatRequest> decode_chat_request(std::string_view body);

// Validates a /v1/embeddings body: `model` and `input` (string, array of strings, array of
// token ids, or array of token arrays; never empty).
Result<ChatRequest> decode_embeddings_request(std::string_view body);

// The body for the upstream: `model` replaced by `upstream_model`; when
// `force_include_usage` and the request streams without include_usage,
// stream_options.include_usage is set so usage can always be metered.
std::string encode_upstream_body(const ChatRequest& request, std::string_view upstream_model,
                                 bool force_include_usage);

// The decoded request as the pipeline carries it (IngressRequest), and back; the two hold the
// same facts, so nothing is re-parsed between decode and the upstream body.
IngressRequest to_ingress(const ChatRequest& request);
ChatRequest from_ingress(const IngressRequest& request);

}  // namespace sluice::protocol::openai_chat
