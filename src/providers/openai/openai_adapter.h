#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "providers/adapter.h"
#include "providers/base_url.h"

namespace sluice::providers {

// `adapter: openai`: OpenAI and every OpenAI-compatible server (vLLM, Ollama, llama.cpp, Groq,
// Together, ...) by base_url. Speaks Chat Completions and Embeddings; authenticates with
// `Authorization: Bearer <api_key>`.
//
// Option `max_tokens_field` (max_tokens | max_completion_tokens): the field that carries a
// translated request's output limit. OpenAI rejects `max_tokens` for its reasoning models and
// takes `max_completion_tokens` for every chat model; most compatible servers know only
// `max_tokens`. Default: max_completion_tokens when the base URL's host is api.openai.com.
class OpenAiAdapter final : public ProviderAdapter {
 public:
  static const config::AdapterSchema kSchema;
  static Result<std::unique_ptr<ProviderAdapter>> make(const config::Provider& provider);

  protocol::ProtocolId wire_protocol(protocol::Operation operation) const override;
  void write_request_head(const RequestSpec& spec, std::string_view body,
                          codec::HeadWriter& head) const override;
  Result<std::string> encode_request(const ir::Request& request, std::string_view model,
                                     bool stream) const override;
  Result<ir::Response> decode_response(std::string_view body) const override;
  std::unique_ptr<protocol::StreamDecoder> make_stream_decoder() const override;
  std::span<const std::string> secrets() const override { return secrets_; }

 private:
  explicit OpenAiAdapter(const config::Provider& provider) : ProviderAdapter(provider) {}

  BaseUrl url_;
  std::vector<std::pair<std::string, std::string>> headers_;  // auth + configured headers
  std::vector<std::string> secrets_;
  bool max_completion_tokens_ = false;
};

}  // namespace sluice::providers
