#pragma once

#include "protocol/anthropic/conventions.h"
#include "protocol/upstream.h"

namespace sluice::protocol::anthropic {

// Anthropic Messages upstreams: request_encoder.h with target.options.default_max_tokens and
// adaptive_thinking (effort budgets at their defaults); response.h decode_response;
// stream_decoder.h.
class MessagesUpstream final : public UpstreamCodec {
 public:
  ProtocolId protocol() const override { return kMessagesProtocol; }
  Operation operation() const override { return Operation::kChat; }
  Result<std::string> encode_request(const ir::Request& request,
                                     const EncodeTarget& target) const override;
  Result<ir::Response> decode_response(std::string_view body) const override;
  std::unique_ptr<protocol::StreamDecoder> make_stream_decoder() const override;
  ProviderOptionsSpec provider_options() const override;
};

}  // namespace sluice::protocol::anthropic
