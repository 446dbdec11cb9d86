#pragma once

#include "protocol/openai_chat/conventions.h"
#include "protocol/upstream.h"

namespace sluice::protocol::openai_chat {

// Chat Completions upstreams (OpenAI and every OpenAI-compatible server, Azure OpenAI):
// request_encoder.h, with the output limit in max_completion_tokens when
// target.options.max_completion_tokens; response.h decode_response; stream_decoder.h.
class ChatUpstream final : public UpstreamCodec {
 public:
  ProtocolId protocol() const override { return kChatProtocol; }
  Operation operation() const override { return Operation::kChat; }
  Result<std::string> encode_request(const ir::Request& request,
                                     const EncodeTarget& target) const override;
  Result<ir::Response> decode_response(std::string_view body) const override;
  std::unique_ptr<protocol::StreamDecoder> make_stream_decoder() const override;
  ProviderOptionsSpec provider_options() const override;
};

}  // namespace sluice::protocol::openai_chat
