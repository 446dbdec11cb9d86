#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include <boost/json/value.hpp>

#include "core/result.h"
#include "protocol/ingress.h"

namespace sluice::protocol::openai_chat {

// A decoded OpenAI Chat Completions (or Embeddings) request: the pipeline's IngressRequest
// (model, stream, include_usage, the caller's body and where the top-level "model" value sits,
// so the upstream body is produced by splicing instead of re-serialising: a 400 KB prompt is
// copied, not re-encoded) plus what only this codec needs. Holds a view of the body: the body
// must outlive the request.
struct ChatRequest : IngressRequest {
  ChatRequest() = default;
  // The codec's own view of a request the pipeline carried (the same facts, nothing re-parsed).
  explicit ChatRequest(IngressRequest request) : IngressRequest(std::move(request)) {}

  // A top-level stream_options member, null included.
  bool has_stream_options() const { return (codec_flags & kHasStreamOptions) != 0; }
  void set_has_stream_options(bool on) {
    codec_flags = on ? (codec_flags | kHasStreamOptions) : (codec_flags & ~kHasStreamOptions);
  }

  // The parsed document, built on first use (the mock provider, rare rewrites).
  const boost::json::value& document() const;

 private:
  static constexpr std::uint32_t kHasStreamOptions = 1;
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

}  // namespace sluice::protocol::openai_chat
