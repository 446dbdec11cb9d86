#include "protocol/openai_chat/embeddings_ingress.h"

#include "protocol/openai_chat/envelope.h"
#include "protocol/openai_chat/ingress.h"

namespace sluice::protocol::openai_chat {

ProtocolId EmbeddingsIngress::protocol() const { return kEmbeddingsProtocol; }

Result<IngressRequest> EmbeddingsIngress::decode(std::string_view body,
                                                 const codec::RequestHead& /*head*/) const {
  auto decoded = decode_embeddings_request(body);
  if (!decoded) {
    return std::move(decoded).error();
  }
  IngressRequest request(std::move(*decoded));
  request.stream = false;  // embeddings have no streams; a "stream" field is the caller's noise
  return request;
}

Result<ir::Request> EmbeddingsIngress::to_ir(IngressRequest& /*request*/) const {
  return Error(ErrorKind::kBadRequest,
               "embeddings can only be served by a provider that speaks the OpenAI embeddings API")
      .with_code("translation_unsupported");
}

std::string EmbeddingsIngress::passthrough_body(const IngressRequest& request,
                                                std::string_view upstream_model) const {
  return encode_upstream_body(ChatRequest(request), upstream_model,
                              /*force_include_usage=*/false);
}

Result<std::string> EmbeddingsIngress::encode_response(const ir::Response& /*response*/,
                                                       bool& /*usage_clamped*/) const {
  return Error(ErrorKind::kInternal, "embeddings answers cannot be translated")
      .with_code("translation_unsupported");
}

}  // namespace sluice::protocol::openai_chat
