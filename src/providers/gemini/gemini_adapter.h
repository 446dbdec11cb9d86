#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "providers/adapter.h"
#include "providers/base_url.h"

namespace sluice::providers {

// `adapter: gemini`: the Gemini API (https://ai.google.dev/api/generate-content), base_url
// default https://generativelanguage.googleapis.com/v1beta. Authenticates with
// `x-goog-api-key: <api_key>` (never the `key` query parameter: URLs end up in logs). Chat
// requests go to <base_url>/models/{model}:generateContent, streams to
// :streamGenerateContent?alt=sse (the model percent-encoded, a leading "models/" dropped).
// Speaks protocol "gemini" for chat routes; embeddings routes cannot name it (Gemini's
// embedContent is another protocol).
//
// Failures: the default classification reads Gemini's {"error":{"code","message","status"}}
// (message, status as the code); a 429 or 503 without Retry-After takes its wait from the
// body's google.rpc.RetryInfo detail ("retryDelay": "37s"). Relayed headers: the default
// (x-ratelimit-*, retry-after); Gemini documents no rate-limit headers of its own.
// No adapter options.
class GeminiAdapter final : public ProviderAdapter {
 public:
  static const config::AdapterSchema kSchema;
  static Result<std::unique_ptr<ProviderAdapter>> make(const config::Provider& provider);

  protocol::ProtocolId wire_protocol(protocol::Operation operation) const override;
  void write_request_head(const RequestSpec& spec, std::string_view body,
                          codec::HeadWriter& head) const override;
  Error classify_failure(int status, const Exchange& response,
                         std::string_view body) const override;
  std::span<const std::string> secrets() const override { return secrets_; }

 private:
  explicit GeminiAdapter(const config::Provider& provider) : ProviderAdapter(provider) {}

  BaseUrl url_;
  std::vector<std::pair<std::string, std::string>> headers_;  // auth, configured
  std::vector<std::string> secrets_;
};

// The request target for `model`: <prefix>/models/<model, percent-encoded>:generateContent, or
// :streamGenerateContent?alt=sse. A leading "models/" in the model name is dropped.
std::string gemini_target(std::string_view prefix, std::string_view model, bool stream);

}  // namespace sluice::providers
