#pragma once

#include <memory>

#include "providers/openai_compatible.h"

namespace sluice::providers {

// `adapter: openai`: OpenAI and every OpenAI-compatible server (vLLM, Ollama, llama.cpp, Groq,
// Together, ...) by base_url. Speaks Chat Completions and Embeddings at base_url +
// /chat/completions and /embeddings, and the Responses API at base_url + /responses (Responses
// callers are passed through; GET /responses/{id} reaches the server that stored the response);
// authenticates with `Authorization: Bearer <api_key>`.
//
// Option `responses_api` (bool, default true): false for a compatible server without /responses;
// Responses callers are then translated to Chat Completions.
//
// Option `max_tokens_field` (max_tokens | max_completion_tokens): the field that carries a
// translated request's output limit. OpenAI rejects `max_tokens` for its reasoning models and
// takes `max_completion_tokens` for every chat model; most compatible servers know only
// `max_tokens`. Default: max_completion_tokens when the base URL's host is api.openai.com.
class OpenAiAdapter final : public OpenAiCompatibleAdapter {
 public:
  static const config::AdapterSchema kSchema;
  static Result<std::unique_ptr<ProviderAdapter>> make(const config::Provider& provider);

 private:
  using OpenAiCompatibleAdapter::OpenAiCompatibleAdapter;
  void request_target(const RequestSpec& spec, std::string& target) const override;
  void retrieval_target(const RequestSpec& spec, std::string& target) const override;
};

}  // namespace sluice::providers
