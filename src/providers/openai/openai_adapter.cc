#include "providers/openai/openai_adapter.h"

#include <array>

#include "core/version.h"
#include "protocol/openai_chat/chat_ingress.h"
#include "protocol/openai_chat/ir_request.h"
#include "protocol/openai_chat/ir_response.h"
#include "protocol/openai_chat/ir_stream.h"

namespace sluice::providers {

namespace {

constexpr std::string_view kDefaultBaseUrl = "https://api.openai.com/v1";
constexpr std::array<std::string_view, 2> kMaxTokensFields = {"max_tokens",
                                                              "max_completion_tokens"};
constexpr std::array<config::AdapterOption, 1> kOptions = {{
    {.name = "max_tokens_field",
     .type = config::AdapterOption::Type::kChoice,
     .choices = kMaxTokensFields},
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
  for (const auto& [name, value] : p.headers) {
    a->headers_.emplace_back(name, value);
  }
  a->max_completion_tokens_ = a->url_.host == "api.openai.com";
  if (const std::string* field = p.option("max_tokens_field")) {
    a->max_completion_tokens_ = *field == "max_completion_tokens";
  }
  return std::unique_ptr<ProviderAdapter>(std::move(a));
}

protocol::ProtocolId OpenAiAdapter::wire_protocol(protocol::Operation operation) const {
  return operation == protocol::Operation::kEmbeddings ? protocol::openai_chat::kEmbeddingsProtocol
                                                       : protocol::openai_chat::kChatProtocol;
}

void OpenAiAdapter::write_request_head(const RequestSpec& spec, std::string_view /*body*/,
                                       codec::HeadWriter& head) const {
  head.request_line("POST", url_.path_prefix,
                    spec.operation == protocol::Operation::kEmbeddings ? "/embeddings"
                                                                        : "/chat/completions")
      .field("Host", url_.host_header)
      .field("User-Agent", kUserAgent);
  for (const auto& [name, value] : headers_) {
    head.field(name, value);
  }
  head.field("Content-Type", "application/json")
      .field("Accept", spec.stream ? "text/event-stream" : "application/json")
      .field("x-request-id", spec.request_id);
  for (const auto& [name, value] : spec.forwarded) {
    head.field(name, value);
  }
  head.field("Content-Length", spec.content_length);
  head.end();
}

Result<std::string> OpenAiAdapter::encode_request(const ir::Request& request,
                                                  std::string_view model, bool stream) const {
  protocol::openai_chat::EncodeOptions options;
  options.use_max_completion_tokens = max_completion_tokens_;
  return protocol::openai_chat::encode_request(request, model, stream, options);
}

Result<ir::Response> OpenAiAdapter::decode_response(std::string_view body) const {
  return protocol::openai_chat::decode_response(body);
}

std::unique_ptr<protocol::StreamDecoder> OpenAiAdapter::make_stream_decoder() const {
  return std::make_unique<protocol::openai_chat::StreamDecoder>();
}

}  // namespace sluice::providers
