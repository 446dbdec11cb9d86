#pragma once

#include "protocol/gemini/conventions.h"
#include "protocol/upstream.h"

namespace sluice::protocol::gemini {

// Gemini upstreams: request_encoder.h (the model and the stream flag go into the URL, which the
// adapter writes, never into the body); response.h decode_response; stream_decoder.h.
class GeminiUpstream final : public UpstreamCodec {
 public:
  ProtocolId protocol() const override { return kGeminiProtocol; }
  Operation operation() const override { return Operation::kChat; }
  Result<std::string> encode_request(const ir::Request& request,
                                     const EncodeTarget& target) const override;
  Result<ir::Response> decode_response(std::string_view body) const override;
  std::unique_ptr<protocol::StreamDecoder> make_stream_decoder() const override;
  ProviderOptionsSpec provider_options() const override;
};

}  // namespace sluice::protocol::gemini
