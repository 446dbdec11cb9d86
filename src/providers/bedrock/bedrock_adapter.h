#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "aws/credentials.h"
#include "aws/sigv4.h"
#include "providers/adapter.h"
#include "providers/base_url.h"
#include "providers/bedrock/temporary_keys.h"

namespace sluice::providers {

// `adapter: bedrock`: Amazon Bedrock Runtime's Converse API
// (https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_Converse.html), base_url
// default https://bedrock-runtime.<region>.amazonaws.com. Chat requests go to
// POST /model/{model}/converse, streams to /model/{model}/converse-stream (the model id, an
// inference profile id or an ARN percent-encoded as one path segment: "anthropic.claude-3-5-
// sonnet-20240620-v1:0" is sent as ...-v1%3A0), in protocol "bedrock_converse"; the stream comes
// back in AWS's binary event stream framing, which the relay reads as events
// (codec/upstream_events.h).
//
// Embeddings routes: InvokeModel (/model/{model}/invoke) with the body of the model's family
// (Titan Text / Multimodal Embeddings, Cohere Embed), protocol "bedrock_embeddings"
// (protocol/bedrock_embeddings/): OpenAI embeddings callers are translated. Bedrock states
// Cohere's token count only in the X-Amzn-Bedrock-Input-Token-Count response header, which
// usage_from_headers reads.
//
// `bedrock.api: invoke` (Claude only): InvokeModel and InvokeModelWithResponseStream with the
// Anthropic Messages body (/model/{model}/invoke, /invoke-with-response-stream), protocol
// "anthropic_messages", so an Anthropic caller is passed through: its body loses `model` and
// `stream` and gains "anthropic_version": "bedrock-2023-05-31" (finish_body), every other
// member as the caller wrote it; the answer is the Messages API's JSON, and the stream's
// `chunk` events carry the Messages API's own events (unwrapped by codec/upstream_events.h).
// Callers' anthropic-beta headers are not passed (Bedrock reads betas from the body's
// anthropic_beta, which a caller's body may carry itself).
//
// Authentication, per request, in write_request_head (the body is final there):
//   - `api_key` set: a Bedrock API key, sent as `Authorization: Bearer <key>` (no signing);
//   - otherwise SigV4 (aws/sigv4.h, service "bedrock", the provider's region) with the
//     credentials aws/credentials.h finds: `bedrock.access_key_id` + `bedrock.secret_access_key`
//     (+ `bedrock.session_token`), else AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY /
//     AWS_SESSION_TOKEN, else the shared files' profile (`bedrock.profile`, AWS_PROFILE,
//     "default"), read once when the snapshot is built; or a role assumed with a web identity
//     token (`bedrock.role_arn` + `bedrock.web_identity_token_file`, AWS_ROLE_ARN +
//     AWS_WEB_IDENTITY_TOKEN_FILE, or a profile's role_arn + web_identity_token_file) through
//     STS (`bedrock.sts_endpoint`, AWS_ENDPOINT_URL_STS, else the region's), its temporary keys
//     kept fresh off the request path (role_credentials.h); or, last, the container credentials
//     endpoint the environment names (AWS_CONTAINER_CREDENTIALS_FULL_URI / _RELATIVE_URI with
//     AWS_CONTAINER_AUTHORIZATION_TOKEN(_FILE): ECS task roles, EKS Pod Identity), its keys
//     kept fresh the same way (container_credentials.h); or, last, EC2's instance metadata
//     service (IMDSv2: instance_credentials.h; AWS_EC2_METADATA_SERVICE_ENDPOINT, skipped with
//     AWS_EC2_METADATA_DISABLED=true), a load error when it does not answer within 3 s.
//     Host, Content-Type, X-Amz-Date,
//     X-Amz-Content-Sha256 (the body's SHA-256), X-Amz-Security-Token and the provider's
//     configured headers are signed; forwarded caller headers are not.
// Region: `bedrock.region`, else AWS_REGION, else AWS_DEFAULT_REGION; required.
//
// Failures: Bedrock's {"message"} body and its exception name in `x-amzn-errortype`
// ("ThrottlingException:http://internal.amazon.com/coral/..."), mapped by
// protocol/bedrock_converse/errors.h: throttling and quota -> 429, retryable; not ready,
// unavailable, internal, model timeout -> retryable 503/500/408; validation -> 400, never
// retried; access denied, unknown or expired credentials, a bad signature -> 502
// upstream_auth_failed naming the provider's credentials; not found -> 404. Retry-After is
// honoured on the retryable ones.
// Secrets (never relayed in an upstream error): the API key, the secret key, the session token.
class BedrockAdapter final : public ProviderAdapter {
 public:
  static const config::AdapterSchema kSchema;
  static Result<std::unique_ptr<ProviderAdapter>> make(const config::Provider& provider);

  protocol::ProtocolId wire_protocol(protocol::Operation operation) const override;
  void finish_body(protocol::ProtocolId protocol, bool stream, std::string& body) const override;
  std::optional<Error> stream_failure(const codec::SseEvent& event) const override;
  void write_request_head(const RequestSpec& spec, std::string_view body,
                          codec::HeadWriter& head) const override;
  Error classify_failure(int status, const Exchange& response,
                         std::string_view body) const override;
  bool relays_response_header(std::string_view name) const override;
  std::optional<ir::Usage> usage_from_headers(const Exchange& response) const override;
  std::span<const std::string> secrets() const override { return secrets_; }

 private:
  BedrockAdapter(const config::Provider& provider, std::string region)
      : ProviderAdapter(provider),
        signer_(std::move(region), "bedrock", aws::SignerOptions{.add_content_sha256 = true}) {}

  BaseUrl url_;
  aws::Signer signer_;
  aws::Credentials credentials_;  // static keys; empty with an API key or a role
  // A web identity role's or a container endpoint's keys, kept fresh; null with static keys.
  std::shared_ptr<TemporaryKeys> temporary_;
  std::vector<std::pair<std::string, std::string>> headers_;  // configured; signed
  std::string bearer_;                                        // "Bearer <api_key>"
  bool invoke_ = false;                                       // bedrock.api: invoke
  std::vector<std::string> secrets_;
};

enum class BedrockApi : bool { kConverse, kInvoke };

// The request target for `model`: <prefix>/model/<model, percent-encoded>/converse, or
// /converse-stream; /invoke or /invoke-with-response-stream for kInvoke (embeddings too).
std::string bedrock_target(std::string_view prefix, std::string_view model, BedrockApi api,
                           bool stream);

}  // namespace sluice::providers
