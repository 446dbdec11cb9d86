#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "providers/adapter.h"
#include "providers/base_url.h"

namespace sluice::providers {

// `adapter: anthropic`: Anthropic's Messages API (https://docs.claude.com/en/api/messages).
// Authenticates with `x-api-key: <api_key>` and sends `anthropic-version`; a caller's
// `anthropic-beta` header is passed on (Claude Code and the SDKs use it to enable features).
// Speaks Messages for chat routes, and its token counting endpoint (/v1/messages/count_tokens
// callers are passed through to /messages/count_tokens); embeddings routes cannot name it.
//
// Options:
//   anthropic_version    the `anthropic-version` header (default 2023-06-01, the current one)
//   default_max_tokens   max_tokens for translated requests that carry none (Anthropic requires
//                        it; OpenAI and Gemini callers may omit it). Default 4096.
//   adaptive_thinking    translated reasoning requests use {"type":"adaptive"} thinking plus
//                        output_config.effort instead of a token budget (models that refuse
//                        budget_tokens). Default false.
// default_max_tokens and adaptive_thinking are upstream_options_ for the anthropic_messages
// upstream codec, whose translation rules (IR -> Messages) are protocol/anthropic/
// request_encoder.h's.
class AnthropicAdapter final : public ProviderAdapter {
 public:
  static const config::AdapterSchema kSchema;
  static Result<std::unique_ptr<ProviderAdapter>> make(const config::Provider& provider);

  protocol::ProtocolId wire_protocol(protocol::Operation operation) const override;
  bool speaks(protocol::ProtocolId protocol, protocol::Operation operation) const override;
  void write_request_head(const RequestSpec& spec, std::string_view body,
                          codec::HeadWriter& head) const override;
  bool relays_response_header(std::string_view name) const override;
  bool passes_caller_header(std::string_view name) const override;
  std::span<const std::string> secrets() const override { return secrets_; }

 private:
  explicit AnthropicAdapter(const config::Provider& provider) : ProviderAdapter(provider) {}

  BaseUrl url_;
  std::vector<std::pair<std::string, std::string>> headers_;  // auth, version, configured
  std::vector<std::string> secrets_;
};

}  // namespace sluice::providers
