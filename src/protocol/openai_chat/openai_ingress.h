#pragma once

#include "protocol/ingress.h"

namespace sluice::protocol::openai_chat {

// What every OpenAI-shaped caller protocol shares: OpenAI's error object, `data:` error events,
// usage from a response body, and the model list. ChatIngress and EmbeddingsIngress add their
// endpoint, decoding and answers.
class OpenAiIngress : public IngressCodec {
 public:
  std::string_view api_name() const override { return "openai"; }

  std::optional<ir::Usage> usage_of_body(std::string_view body) const override;
  BodyFacts facts_of_body(std::string_view body) const override;
  ErrorReply encode_error(const Error& error) const override;
  void append_stream_error(const Error& error, std::string& out) const override;
  bool is_native_error(std::string_view body) const override;
  std::string encode_model_list(std::span<const std::string_view> aliases) const override;
};

}  // namespace sluice::protocol::openai_chat
