#pragma once

#include "protocol/openai_responses/conventions.h"
#include "protocol/upstream.h"

namespace sluice::protocol::openai_responses {

// OpenAI Responses upstreams, for callers of other protocols towards a provider whose
// translated traffic uses Responses (the mock with mock.protocol openai_responses; the openai
// adapter translates to Chat Completions and passes only Responses callers through):
// request_encoder.h; response.h decode_response; stream_decoder.h.
class ResponsesUpstream final : public UpstreamCodec {
 public:
  ProtocolId protocol() const override { return kResponsesProtocol; }
  Operation operation() const override { return Operation::kChat; }
  Result<std::string> encode_request(const ir::Request& request,
                                     const EncodeTarget& target) const override;
  Result<ir::Response> decode_response(std::string_view body) const override;
  std::unique_ptr<protocol::StreamDecoder> make_stream_decoder() const override;
  ProviderOptionsSpec provider_options() const override;
};

}  // namespace sluice::protocol::openai_responses
