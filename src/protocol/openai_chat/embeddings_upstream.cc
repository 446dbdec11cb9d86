#include "protocol/openai_chat/embeddings_upstream.h"

namespace sluice::protocol::openai_chat {

Result<std::string> EmbeddingsUpstream::encode_request(const ir::Request& /*request*/,
                                                       const EncodeTarget& /*target*/) const {
  return Error(ErrorKind::kBadRequest,
               "embeddings are never translated: this route's provider must speak the OpenAI "
               "embeddings API")
      .with_code("translation_unsupported");
}

Result<ir::Response> EmbeddingsUpstream::decode_response(std::string_view /*body*/) const {
  return Error(ErrorKind::kInternal, "embeddings answers are never translated")
      .with_code("translation_unsupported");
}

std::unique_ptr<protocol::StreamDecoder> EmbeddingsUpstream::make_stream_decoder() const {
  return nullptr;
}

}  // namespace sluice::protocol::openai_chat
