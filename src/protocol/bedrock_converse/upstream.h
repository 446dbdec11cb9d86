#pragma once

#include "protocol/bedrock_converse/conventions.h"
#include "protocol/upstream.h"

namespace sluice::protocol::bedrock_converse {

// Amazon Bedrock Converse upstreams: request_encoder.h (no UpstreamOptions apply: effort budgets
// and the answer room at their defaults), response.h decode_response, stream_decoder.h. The
// adapter writes the model id into the URL (/model/{modelId}/converse or /converse-stream for
// target.stream), signs the request (SigV4) and turns the binary event stream into the events
// StreamDecoder reads.
class ConverseUpstream final : public UpstreamCodec {
 public:
  ProtocolId protocol() const override { return kConverseProtocol; }
  Operation operation() const override { return Operation::kChat; }
  Result<std::string> encode_request(const ir::Request& request,
                                     const EncodeTarget& target) const override;
  Result<ir::Response> decode_response(std::string_view body) const override;
  std::unique_ptr<protocol::StreamDecoder> make_stream_decoder() const override;
  ProviderOptionsSpec provider_options() const override;
};

}  // namespace sluice::protocol::bedrock_converse
