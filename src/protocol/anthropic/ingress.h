#pragma once

#include "protocol/anthropic/conventions.h"
#include "protocol/ingress.h"

namespace sluice::protocol::anthropic {

// POST /v1/messages: Anthropic Messages callers (the Anthropic SDKs, Claude Code). The body is
// decoded into the IR at once (request_decoder.h): today every upstream that can answer it
// speaks another protocol. Errors and GET /v1/models (when the caller sends anthropic-version)
// are answered in Anthropic's shapes.
class MessagesIngress : public IngressCodec {
 public:
  std::span<const codec::MemberPath> output_limit_fields() const override {
    static constexpr codec::MemberPath kFields[] = {{"max_tokens", ""}};
    return kFields;
  }
  ProtocolId protocol() const override { return kMessagesProtocol; }
  Operation operation() const override { return Operation::kChat; }
  std::string_view api_name() const override { return "anthropic"; }
  std::string_view path() const override { return "/v1/messages"; }

  Result<IngressRequest> decode(std::string_view body,
                                const codec::RequestHead& head) const override;
  Result<ir::Request> to_ir(IngressRequest& request) const override;
  std::string passthrough_body(const IngressRequest& request,
                               std::string_view upstream_model) const override;

  Result<std::string> encode_response(const ir::Response& response,
                                      bool& usage_clamped) const override;
  std::unique_ptr<StreamEncoder> make_stream_encoder(const IngressRequest& request) const override;
  std::unique_ptr<StreamSniffer> make_stream_sniffer(const IngressRequest& request) const override;
  std::optional<ir::Usage> usage_of_body(std::string_view body) const override;
  BodyFacts facts_of_body(std::string_view body) const override;

  ErrorReply encode_error(const Error& error) const override;
  void append_stream_error(const Error& error, std::string& out) const override;
  bool is_native_error(std::string_view body) const override;

  // An Anthropic SDK lists models with `anthropic-version` set.
  bool claims_model_listing(const codec::RequestHead& head) const override;
  std::string encode_model_list(std::span<const std::string_view> aliases) const override;
  std::string encode_model(std::string_view alias) const override;
};

// POST /v1/messages/count_tokens: the prompt's token count, {"input_tokens": N}, for the same
// routes as /v1/messages (Claude Code calls it before long requests). An Anthropic upstream
// counts with its own tokenizer (the caller's bytes relayed, passthrough); towards any other the
// gateway answers with ir::estimate_input_tokens and `x-sluice-token-count: estimate`. Nothing
// is metered: counting is free at Anthropic.
class CountTokensIngress final : public MessagesIngress {
 public:
  // A token count produces no output.
  std::span<const codec::MemberPath> output_limit_fields() const override { return {}; }
  bool answers_locally() const override { return true; }
  ProtocolId protocol() const override { return kCountTokensProtocol; }
  std::string_view path() const override { return "/v1/messages/count_tokens"; }

  Result<IngressRequest> decode(std::string_view body,
                                const codec::RequestHead& head) const override;
  Result<ir::Request> to_ir(IngressRequest& request) const override;
  std::optional<Result<LocalAnswer>> local_answer(IngressRequest& request) const override;
  // No model answers to translate and no streams: an upstream of another protocol is never
  // asked (local_answer), and the Anthropic upstream's answer is relayed as it is.
  Result<std::string> encode_response(const ir::Response& response,
                                      bool& usage_clamped) const override;
  std::unique_ptr<StreamEncoder> make_stream_encoder(const IngressRequest& request) const override;
  std::unique_ptr<StreamSniffer> make_stream_sniffer(const IngressRequest& request) const override;
  bool claims_model_listing(const codec::RequestHead& /*head*/) const override { return false; }
};

}  // namespace sluice::protocol::anthropic
