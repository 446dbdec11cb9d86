#include "providers/anthropic/anthropic_adapter.h"

#include <array>

#include "protocol/anthropic/conventions.h"
#include "providers/claude_options.h"

namespace sluice::providers {

namespace {

constexpr std::string_view kDefaultBaseUrl = "https://api.anthropic.com/v1";
// https://docs.claude.com/en/api/versioning: the version header every request must carry.
constexpr std::string_view kDefaultVersion = "2023-06-01";

constexpr std::array<config::AdapterOption, 3> kOptions = {{
    {.name = "anthropic_version",
     .type = config::AdapterOption::Type::kString,
     .min = 0,
     .max = 0,
     .choices = {}},
    kDefaultMaxTokensOption,
    kAdaptiveThinkingOption,
}};

}  // namespace

const config::AdapterSchema AnthropicAdapter::kSchema = {
    .name = "anthropic", .network = true, .options = kOptions};

Result<std::unique_ptr<ProviderAdapter>> AnthropicAdapter::make(const config::Provider& p) {
  std::unique_ptr<AnthropicAdapter> a(new AnthropicAdapter(p));
  if (auto failed = a->connect_to(kDefaultBaseUrl, a->url_)) {
    return std::move(*failed);
  }
  a->passes_caller_headers_ = true;
  if (!p.api_key.empty()) {
    a->headers_.emplace_back("x-api-key", p.api_key);
    a->secrets_.push_back(p.api_key);
  }
  const std::string* version = p.option("anthropic_version");
  a->headers_.emplace_back("anthropic-version",
                           version != nullptr ? *version : std::string(kDefaultVersion));
  for (const auto& [name, value] : p.headers) {
    a->headers_.emplace_back(name, value);
  }
  read_claude_options(p, a->upstream_options_);
  return std::unique_ptr<ProviderAdapter>(std::move(a));
}

protocol::ProtocolId AnthropicAdapter::wire_protocol(protocol::Operation operation) const {
  return operation == protocol::Operation::kChat ? protocol::anthropic::kMessagesProtocol
                                                 : protocol::ProtocolId();
}

bool AnthropicAdapter::speaks(protocol::ProtocolId protocol, protocol::Operation operation) const {
  return operation == protocol::Operation::kChat &&
         (protocol == protocol::anthropic::kMessagesProtocol ||
          protocol == protocol::anthropic::kCountTokensProtocol);
}

void AnthropicAdapter::write_request_head(const RequestSpec& spec, std::string_view /*body*/,
                                          codec::HeadWriter& head) const {
  head.request_line("POST", url_.path_prefix,
                    spec.protocol == protocol::anthropic::kCountTokensProtocol
                        ? "/messages/count_tokens"
                        : "/messages");
  write_common_fields(spec, url_.host_header, headers_, head);
}

bool AnthropicAdapter::relays_response_header(std::string_view name) const {
  // https://docs.claude.com/en/api/rate-limits: anthropic-ratelimit-{requests,tokens,
  // input-tokens,output-tokens}-{limit,remaining,reset}, and retry-after on 429.
  return istarts_with(name, "anthropic-ratelimit-") ||
         ProviderAdapter::relays_response_header(name);
}

bool AnthropicAdapter::passes_caller_header(std::string_view name) const {
  return iequals(name, "anthropic-beta");
}

}  // namespace sluice::providers
