#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "providers/adapter.h"
#include "providers/base_url.h"
#include "providers/vertex/google_token_source.h"

namespace sluice::providers {

// `adapter: vertex`: Google Cloud Vertex AI, one publisher per provider (`vertex.publisher`):
//   - google (default): Gemini, protocol "gemini" (the Gemini API's bodies):
//     POST <base>/projects/{project}/locations/{location}/publishers/google/models/{model}
//     :generateContent, streams :streamGenerateContent?alt=sse
//     (https://cloud.google.com/vertex-ai/generative-ai/docs/model-reference/inference);
//   - anthropic: Claude, protocol "anthropic_messages" (the Messages API's bodies, so an
//     Anthropic caller is passed through): .../publishers/anthropic/models/{model}:rawPredict,
//     streams :streamRawPredict; the body loses `model` (the URL names it) and gains
//     "anthropic_version": "vertex-2023-10-16" (`vertex.anthropic_version`), as
//     https://docs.claude.com/en/api/claude-on-vertex-ai asks.
// base_url default https://{location}-aiplatform.googleapis.com/v1, or
// https://aiplatform.googleapis.com/v1 for location "global".
// Project: `vertex.project`, else the credentials' project_id, else GOOGLE_CLOUD_PROJECT;
// location: `vertex.location`, else GOOGLE_CLOUD_LOCATION, else "global".
//
// Authentication: `Authorization: Bearer <OAuth access token>` from the credentials file
// (`vertex.credentials_file`), the metadata server (`vertex.metadata_server`:
// metadata.google.internal on GCE, GKE with Workload Identity, Cloud Run), else
// GOOGLE_APPLICATION_CREDENTIALS, else gcloud's application default credentials, else the
// metadata server GCE_METADATA_HOST names: a service account key, an authorized user or the
// workload's own service account (gcp/google_credentials.h).
// Tokens are fetched and refreshed off the request path (google_token_source.h); make() waits
// up to 5 s for the first one so the first requests after start carry one. With `api_key`
// instead: Vertex AI express mode, `x-goog-api-key` and the path without project and location
// (google publisher only).
//
// Failures: Google's {"error":{"code","message","status"}}, as the Gemini adapter reads them
// (RetryInfo's retryDelay honoured); a 401/403 is the gateway's credential problem (502
// upstream_auth_failed). Embeddings routes cannot name it yet.
class VertexAdapter final : public ProviderAdapter {
 public:
  static const config::AdapterSchema kSchema;
  static Result<std::unique_ptr<ProviderAdapter>> make(const config::Provider& provider);

  protocol::ProtocolId wire_protocol(protocol::Operation operation) const override;
  void finish_body(protocol::ProtocolId protocol, bool stream, std::string& body) const override;
  void write_request_head(const RequestSpec& spec, std::string_view body,
                          codec::HeadWriter& head) const override;
  Error classify_failure(int status, const Exchange& response,
                         std::string_view body) const override;
  bool passes_caller_header(std::string_view name) const override;
  std::span<const std::string> secrets() const override { return secrets_; }

 private:
  explicit VertexAdapter(const config::Provider& provider) : ProviderAdapter(provider) {}

  BaseUrl url_;
  std::string models_path_;  // <prefix>/projects/{p}/locations/{l}/publishers/{publisher}/models/
  bool anthropic_ = false;
  std::string anthropic_version_json_;                        // "\"vertex-2023-10-16\""
  std::shared_ptr<GoogleTokenSource> tokens_;                 // null with an API key
  std::vector<std::pair<std::string, std::string>> headers_;  // API key, configured
  std::vector<std::string> secrets_;
};

// The request target for `model` under `models_path`: <models_path><model, percent-encoded>
// :<method>, the method by publisher and stream.
std::string vertex_target(std::string_view models_path, std::string_view model, bool anthropic,
                          bool stream);

}  // namespace sluice::providers
