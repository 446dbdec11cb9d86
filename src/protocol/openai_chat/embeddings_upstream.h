#pragma once

#include "protocol/openai_chat/conventions.h"
#include "protocol/upstream.h"

namespace sluice::protocol::openai_chat {

// Embeddings upstreams. Embeddings are only ever passed through (an OpenAI embeddings caller to
// an upstream that speaks the same API; EmbeddingsIngress::to_ir refuses anything else), so
// there is nothing to translate: encode_request and decode_response refuse with
// translation_unsupported, and there are no streams.
class EmbeddingsUpstream final : public UpstreamCodec {
 public:
  ProtocolId protocol() const override { return kEmbeddingsProtocol; }
  Operation operation() const override { return Operation::kEmbeddings; }
  Result<std::string> encode_request(const ir::Request& request,
                                     const EncodeTarget& target) const override;
  Result<ir::Response> decode_response(std::string_view body) const override;
  std::unique_ptr<protocol::StreamDecoder> make_stream_decoder() const override;
};

}  // namespace sluice::protocol::openai_chat
