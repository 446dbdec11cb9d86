#pragma once

#include "protocol/openai_chat/openai_ingress.h"

namespace sluice::protocol::openai_chat {

// Wire format ids of this folder's protocols.
inline constexpr ProtocolId kChatProtocol = "openai_chat";
inline constexpr ProtocolId kEmbeddingsProtocol = "openai_embeddings";

// POST /v1/chat/completions: OpenAI Chat Completions callers. Passthrough is the fast path:
// the body is validated in one SAX pass (chat_request.h) and spliced for the upstream; the IR
// is decoded (ir_request.h) only when the upstream speaks another protocol, whose answers are
// then written back in OpenAI's shape by response_encoder.h and stream_encoder.h.
class ChatIngress final : public OpenAiIngress {
 public:
  // max_tokens first: every OpenAI-compatible server reads it; an adapter that wants
  // max_completion_tokens renames it (ProviderAdapter::output_limit_field).
  std::span<const codec::MemberPath> output_limit_fields() const override {
    static constexpr codec::MemberPath kFields[] = {{"max_tokens", ""},
                                                    {"max_completion_tokens", ""}};
    return kFields;
  }
  ProtocolId protocol() const override { return kChatProtocol; }
  Operation operation() const override { return Operation::kChat; }
  std::string_view path() const override { return "/v1/chat/completions"; }

  Result<IngressRequest> decode(std::string_view body,
                                const codec::RequestHead& head) const override;
  Result<ir::Request> to_ir(IngressRequest& request) const override;
  // The model spliced in; streams always ask for usage (stream_options.include_usage) so they
  // can be metered, and make_stream_sniffer drops the extra chunk when the caller did not ask.
  std::string passthrough_body(const IngressRequest& request,
                               std::string_view upstream_model) const override;

  // A chat.completion (response_encoder.h). `created` is the upstream's time when the IR has
  // one, else now. Every IR usage is expressible in OpenAI's terms: usage_clamped stays false.
  Result<std::string> encode_response(const ir::Response& response,
                                      bool& usage_clamped) const override;
  // An openai_chat::StreamEncoder (stream_encoder.h) with the caller's include_usage and
  // `created` = now.
  std::unique_ptr<protocol::StreamEncoder> make_stream_encoder(
      const IngressRequest& request) const override;
  std::unique_ptr<StreamSniffer> make_stream_sniffer(const IngressRequest& request) const override;
};

}  // namespace sluice::protocol::openai_chat
