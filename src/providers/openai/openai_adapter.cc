#include "providers/openai/openai_adapter.h"

#include <array>

#include "protocol/openai_responses/conventions.h"

namespace sluice::providers {

namespace {

constexpr std::string_view kDefaultBaseUrl = "https://api.openai.com/v1";
constexpr std::array<std::string_view, 2> kMaxTokensFields = {"max_tokens",
                                                              "max_completion_tokens"};
constexpr std::array<config::AdapterOption, 2> kOptions = {{
    {.name = "max_tokens_field",
     .type = config::AdapterOption::Type::kChoice,
     .choices = kMaxTokensFields},
    {.name = "responses_api",
     .type = config::AdapterOption::Type::kBool,
     .min = 0,
     .max = 0,
     .choices = {}},
}};

}  // namespace

const config::AdapterSchema OpenAiAdapter::kSchema = {
    .name = "openai", .network = true, .options = kOptions};

Result<std::unique_ptr<ProviderAdapter>> OpenAiAdapter::make(const config::Provider& p) {
  std::unique_ptr<OpenAiAdapter> a(new OpenAiAdapter(p));
  if (auto failed = a->connect_to(kDefaultBaseUrl, a->url_)) {
    return std::move(*failed);
  }
  if (!p.api_key.empty()) {
    a->headers_.emplace_back("Authorization", "Bearer " + p.api_key);
    a->secrets_.push_back(p.api_key);
  }
  a->add_configured_headers();
  a->upstream_options_.max_completion_tokens = a->url_.host == "api.openai.com";
  if (const std::string* field = p.option("max_tokens_field")) {
    a->upstream_options_.max_completion_tokens = *field == "max_completion_tokens";
  }
  if (const std::string* responses = p.option("responses_api")) {
    a->responses_api_ = *responses == "true";
  }
  return std::unique_ptr<ProviderAdapter>(std::move(a));
}

void OpenAiAdapter::request_target(const RequestSpec& spec, std::string& target) const {
  target.append(url_.path_prefix);
  if (spec.operation == protocol::Operation::kEmbeddings) {
    target.append("/embeddings");
  } else if (spec.protocol == protocol::openai_responses::kResponsesProtocol) {
    target.append("/responses");
  } else {
    target.append("/chat/completions");
  }
}

void OpenAiAdapter::retrieval_target(const RequestSpec& spec, std::string& target) const {
  target.append(url_.path_prefix).append(spec.resource);
}

}  // namespace sluice::providers
