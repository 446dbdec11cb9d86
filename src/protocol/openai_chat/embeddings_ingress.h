#pragma once

#include "protocol/openai_chat/ingress.h"

namespace sluice::protocol::openai_chat {

// POST /v1/embeddings: OpenAI Embeddings callers. Passed through to upstreams that speak OpenAI
// embeddings; translated (ir::Request::embed, ir::Response::embeddings) for the others (Bedrock's
// Titan and Cohere models):
//   to_ir     `input` (a string or an array of strings; token-id arrays are tokenizer-specific:
//             400 translation_unsupported), `dimensions` (a positive integer), `user`, and
//             `input_type` (not OpenAI's: Cohere's, for callers that send it as an extra
//             member); `encoding_format` must be "float" or "base64".
//   encode_response_for  the OpenAI list {"object":"list","data":[{"object":"embedding",
//             "index","embedding"}],"model","usage":{"prompt_tokens","total_tokens"}}, each
//             vector as numbers, or as base64 of its little-endian float32 values when the
//             caller asked for encoding_format "base64" (what the official SDKs send by
//             default); `model` is the caller's. encode_response (no request) writes numbers.
// No streams.
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
  Result<std::string> encode_response_for(const IngressRequest& request,
                                          const ir::Response& response,
                                          bool& usage_clamped) const override;
  std::unique_ptr<protocol::StreamEncoder> make_stream_encoder(
      const IngressRequest&) const override {
    return nullptr;
  }
  std::unique_ptr<protocol::StreamSniffer> make_stream_sniffer(
      const IngressRequest&) const override {
    return nullptr;
  }
};

}  // namespace sluice::protocol::openai_chat
