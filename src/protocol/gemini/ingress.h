#pragma once

#include <optional>
#include <string_view>

#include "protocol/gemini/conventions.h"
#include "protocol/ingress.h"

namespace sluice::protocol::gemini {

// Where a generateContent URL points: the model (still percent-encoded) and the method.
struct GenerateTarget {
  std::string_view model;
  bool stream = false;  // :streamGenerateContent
};

// Parses /v1beta/models/{model}:generateContent and :streamGenerateContent (also under /v1/,
// the API's stable version); nullopt for any other path.
std::optional<GenerateTarget> parse_generate_path(std::string_view path);

// The Gemini API for callers (the Google Gen AI SDKs, curl against generativelanguage):
//   POST /v1beta/models/{model}:generateContent
//   POST /v1beta/models/{model}:streamGenerateContent?alt=sse
//   GET  /v1beta/models            (the aliases the key may use, in Gemini's list shape)
// The model comes from the path (percent-decoded) and is the route alias; the body has none,
// so an upstream of the same protocol gets the caller's bytes unchanged and the adapter writes
// the upstream model into its own URL. The caller's key is `x-goog-api-key`, the `key` query
// parameter, or what IngressCodec::credential accepts. Streams need alt=sse: without it the
// API would answer one JSON array, which the gateway does not produce.
class GeminiIngress final : public IngressCodec {
 public:
  std::span<const codec::MemberPath> output_limit_fields() const override {
    static constexpr codec::MemberPath kFields[] = {{"generationConfig", "maxOutputTokens"}};
    return kFields;
  }
  ProtocolId protocol() const override { return kGeminiProtocol; }
  Operation operation() const override { return Operation::kChat; }
  std::string_view api_name() const override { return "gemini"; }
  std::string_view path() const override { return "/v1beta/models/{model}:generateContent"; }
  bool matches(std::string_view path) const override;

  // x-goog-api-key, then ?key=, then the default sources.
  std::span<const CredentialSource> credential_sources() const override;

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

  ErrorReply encode_error(const Error& error) const override;
  void append_stream_error(const Error& error, std::string& out) const override;
  bool is_native_error(std::string_view body) const override;

  // GET /v1beta/models is Gemini's alone.
  bool claims_model_listing(const codec::RequestHead& head) const override;
  std::string encode_model_list(std::span<const std::string_view> aliases) const override;
};

}  // namespace sluice::protocol::gemini
