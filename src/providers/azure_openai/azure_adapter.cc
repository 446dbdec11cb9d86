#include "providers/azure_openai/azure_adapter.h"

#include <array>

#include "protocol/openai_responses/conventions.h"

namespace sluice::providers {

namespace {

// https://learn.microsoft.com/azure/ai-services/openai/reference: data plane inference, GA.
constexpr std::string_view kDefaultApiVersion = "2024-10-21";
constexpr std::array<std::string_view, 2> kStyles = {"deployments", "v1"};
constexpr std::array<config::AdapterOption, 2> kOptions = {{
    {.name = "api_version",
     .type = config::AdapterOption::Type::kString,
     .min = 0,
     .max = 0,
     .choices = {}},
    {.name = "api_style", .type = config::AdapterOption::Type::kChoice, .choices = kStyles},
}};

}  // namespace

const config::AdapterSchema AzureOpenAiAdapter::kSchema = {
    .name = "azure_openai", .network = true, .options = kOptions};

Result<std::unique_ptr<ProviderAdapter>> AzureOpenAiAdapter::make(const config::Provider& p) {
  if (p.base_url.empty()) {
    return Error(ErrorKind::kBadRequest, p.source + ": provider " + p.id +
                                             ": base_url is required for azure_openai "
                                             "(https://<resource>.openai.azure.com/openai)");
  }
  std::unique_ptr<AzureOpenAiAdapter> a(new AzureOpenAiAdapter(p));
  if (auto failed = a->connect_to({}, a->url_)) {
    return std::move(*failed);
  }
  if (!p.api_key.empty()) {
    a->headers_.emplace_back("api-key", p.api_key);
    a->secrets_.push_back(p.api_key);
  }
  a->add_configured_headers();
  a->upstream_options_.max_completion_tokens = true;
  const std::string* style = p.option("api_style");
  a->v1_ = style != nullptr && *style == "v1";
  const std::string* version = p.option("api_version");
  if (version != nullptr) {
    a->api_version_ = *version;
  } else if (!a->v1_) {
    a->api_version_ = std::string(kDefaultApiVersion);
  }
  return std::unique_ptr<ProviderAdapter>(std::move(a));
}

void AzureOpenAiAdapter::request_target(const RequestSpec& spec, std::string& target) const {
  const bool embeddings = spec.operation == protocol::Operation::kEmbeddings;
  if (!embeddings && spec.protocol == protocol::openai_responses::kResponsesProtocol) {
    // Azure serves the Responses API on its v1 surface only, whatever style chat uses.
    RequestSpec resource = spec;
    resource.resource = "/responses";
    retrieval_target(resource, target);
    return;
  }
  target.append(url_.path_prefix);
  if (v1_) {
    target.append("/v1");
  } else {
    target.append("/deployments/");
    append_path_segment(target, spec.model);
  }
  target.append(embeddings ? "/embeddings" : "/chat/completions");
  if (!api_version_.empty()) {
    target.append("?api-version=");
    append_path_segment(target, api_version_);
  }
}

void AzureOpenAiAdapter::retrieval_target(const RequestSpec& spec, std::string& target) const {
  target.append(url_.path_prefix).append("/v1").append(spec.resource);
  // A dated api-version belongs to the deployments API; the v1 API takes one only when the
  // operator set it for v1 (e.g. "preview").
  if (v1_ && !api_version_.empty()) {
    target.append(spec.resource.find('?') == std::string_view::npos ? "?api-version="
                                                                    : "&api-version=");
    append_path_segment(target, api_version_);
  }
}

}  // namespace sluice::providers
