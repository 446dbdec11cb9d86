#pragma once

#include "protocol/ingress.h"
#include "protocol/openai_responses/conventions.h"

namespace sluice::protocol::openai_responses {

// POST /v1/responses: OpenAI Responses callers (the OpenAI SDKs' client.responses, Codex).
// Passthrough is the fast path: decode() reads only the envelope (model, stream, store,
// previous_response_id, and input's type) in one SAX pass, and the upstream gets the caller's
// bytes with the model spliced, so every Responses feature (built-in tools, conversations,
// background mode, structured output) reaches an upstream that speaks Responses. to_ir() decodes
// the whole body (request_decoder.h) only when the upstream speaks another protocol; answers and
// streams then come back through response.h and stream_encoder.h.
//
// Continuations (previous_response_id, conversation) live in the upstream that stored the
// earlier response: to_ir() refuses them with a 400 explaining that this model's upstream does
// not speak Responses. GET /v1/responses/{id} (and its sub-resources) are stored objects
// (match_stored_object): the pipeline relays them to the provider that created the response.
// Errors are OpenAI's {"error":{message,type,param,code}}.
class ResponsesIngress final : public IngressCodec {
 public:
  std::span<const codec::MemberPath> output_limit_fields() const override {
    static constexpr codec::MemberPath kFields[] = {{"max_output_tokens", ""}};
    return kFields;
  }
  ProtocolId protocol() const override { return kResponsesProtocol; }
  Operation operation() const override { return Operation::kChat; }
  std::string_view api_name() const override { return "openai_responses"; }
  std::string_view path() const override { return "/v1/responses"; }

  Result<IngressRequest> decode(std::string_view body,
                                const codec::RequestHead& head) const override;
  Result<ir::Request> to_ir(IngressRequest& request) const override;
  // The caller's bytes with the model spliced; nothing else changes (Responses streams always
  // end with the usage in response.completed).
  std::string passthrough_body(const IngressRequest& request,
                               std::string_view upstream_model) const override;

  // response.h encode_response, created = the upstream's time or now.
  Result<std::string> encode_response(const ir::Response& response,
                                      bool& usage_clamped) const override;
  // ... with the request's tool names restored (namespaced and custom tools).
  Result<std::string> encode_response_for(const IngressRequest& request,
                                          const ir::Response& response,
                                          bool& usage_clamped) const override;
  bool seals_reasoning() const override { return true; }
  std::unique_ptr<protocol::StreamEncoder> make_stream_encoder(
      const IngressRequest& request) const override;
  std::unique_ptr<protocol::StreamSniffer> make_stream_sniffer(
      const IngressRequest& request) const override;
  std::optional<ir::Usage> usage_of_body(std::string_view body) const override;

  // /v1/responses/{id}[/...] with an id starting resp_: the upstream resource is everything
  // from /responses/ on (query included).
  std::optional<StoredObjectRef> match_stored_object(std::string_view target) const override;
  // The answer's `id`, unless the request had "store": false.
  std::string stored_id_of_body(const IngressRequest& request,
                                std::string_view body) const override;

  ErrorReply encode_error(const Error& error) const override;
  void append_stream_error(const Error& error, std::string& out) const override;
  bool is_native_error(std::string_view body) const override;
  std::string encode_model_list(std::span<const std::string_view> aliases) const override;
};

}  // namespace sluice::protocol::openai_responses
