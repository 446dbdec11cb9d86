#pragma once

#include "protocol/openai_chat/ingress.h"

namespace sluice::protocol::openai_chat {

// POST /v1/embeddings: OpenAI Embeddings callers. Always passthrough: the IR has no embeddings
// shape, so an embeddings route must name an upstream that speaks OpenAI embeddings (to_ir and
// the answer encoders fail with kBadRequest / kInternal). No streams.
class EmbeddingsIngress final : public OpenAiIngress {
 public:
  ProtocolId protocol() const override;
  Operation operation() const override { return Operation::kEmbeddings; }
  std::string_view path() const override { return "/v1/embeddings"; }

  Result<IngressRequest> decode(std::string_view body,
                                const codec::RequestHead& head) const override;
  Result<ir::Request> to_ir(IngressRequest& request) const override;
  std::string passthrough_body(const IngressRequest& request,
                               std::string_view upstream_model) const override;

  Result<std::string> encode_response(const ir::Response& response,
                                      bool& usage_clamped) const override;
  std::unique_ptr<StreamEncoder> make_stream_encoder(const IngressRequest&) const override {
    return nullptr;
  }
  std::unique_ptr<protocol::StreamSniffer> make_stream_sniffer(
      const IngressRequest&) const override {
    return nullptr;
  }
};

}  // namespace sluice::protocol::openai_chat
