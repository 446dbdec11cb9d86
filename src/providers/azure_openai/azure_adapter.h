#pragma once

#include <memory>
#include <string>

#include "providers/openai_compatible.h"

namespace sluice::providers {

// `adapter: azure_openai`: Azure OpenAI. The route's model names the deployment. base_url is the
// resource's `https://<resource>.openai.azure.com/openai` (required: there is no default
// resource). Authenticates with `api-key: <api_key>`.
//
// Options:
//   api_version  the `api-version` query parameter (default 2024-10-21, the latest GA version
//                of the data-plane inference API)
//   api_style    `deployments` (default): POST {base_url}/deployments/{model}/chat/completions
//                ?api-version=...; `v1`: POST {base_url}/v1/chat/completions with the model in
//                the body (Azure's v1 API), api-version only when set explicitly.
// The Responses API (Responses callers passed through, GET /responses/{id}) lives on Azure's v1
// surface in either style: POST {base_url}/v1/responses with the deployment as the body's model
// (https://learn.microsoft.com/azure/ai-foundry/openai/how-to/responses); api-version only in
// the v1 style when set explicitly.
// Azure's content filter answers a filtered prompt with 400 code `content_filter` (kept as the
// error's code, never retried) and a filtered completion with finish_reason `content_filter`.
// Translated requests send `max_completion_tokens` (Azure serves OpenAI's reasoning models).
class AzureOpenAiAdapter final : public OpenAiCompatibleAdapter {
 public:
  static const config::AdapterSchema kSchema;
  static Result<std::unique_ptr<ProviderAdapter>> make(const config::Provider& provider);

 private:
  using OpenAiCompatibleAdapter::OpenAiCompatibleAdapter;
  void request_target(const RequestSpec& spec, std::string& target) const override;
  void retrieval_target(const RequestSpec& spec, std::string& target) const override;

  std::string api_version_;
  bool v1_ = false;
};

}  // namespace sluice::providers
