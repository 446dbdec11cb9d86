#include "providers/openai_compatible.h"

#include "protocol/openai_chat/ingress.h"
#include "protocol/openai_chat/request_encoder.h"
#include "protocol/openai_chat/response.h"
#include "protocol/openai_chat/stream_decoder.h"
#include "protocol/openai_responses/conventions.h"

namespace sluice::providers {

protocol::ProtocolId OpenAiCompatibleAdapter::wire_protocol(protocol::Operation operation) const {
  return operation == protocol::Operation::kEmbeddings ? protocol::openai_chat::kEmbeddingsProtocol
                                                       : protocol::openai_chat::kChatProtocol;
}

bool OpenAiCompatibleAdapter::speaks(protocol::ProtocolId protocol,
                                     protocol::Operation operation) const {
  if (protocol == protocol::openai_responses::kResponsesProtocol) {
    return responses_api_ && operation == protocol::Operation::kChat;
  }
  return ProviderAdapter::speaks(protocol, operation);
}

bool OpenAiCompatibleAdapter::write_retrieval_head(const RequestSpec& spec,
                                                   codec::HeadWriter& head) const {
  if (!speaks(spec.protocol, protocol::Operation::kChat) || spec.resource.empty()) {
    return false;
  }
  std::string& out = head.out();
  out.append("GET ");
  retrieval_target(spec, out);
  out.append(" HTTP/1.1\r\n");
  write_common_fields(spec, url_.host_header, headers_, head);
  return true;
}

void OpenAiCompatibleAdapter::add_configured_headers() {
  for (const auto& [name, value] : config().headers) {
    headers_.emplace_back(name, value);
  }
}

void OpenAiCompatibleAdapter::write_request_head(const RequestSpec& spec, std::string_view /*body*/,
                                                 codec::HeadWriter& head) const {
  std::string& out = head.out();
  out.append("POST ");
  request_target(spec, out);
  out.append(" HTTP/1.1\r\n");
  write_common_fields(spec, url_.host_header, headers_, head);
}

std::string_view OpenAiCompatibleAdapter::output_limit_field(protocol::ProtocolId protocol) const {
  if (protocol == protocol::openai_chat::kChatProtocol && upstream_options_.max_completion_tokens) {
    return "max_completion_tokens";
  }
  return {};
}

}  // namespace sluice::providers
