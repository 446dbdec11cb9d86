#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "core/error.h"
#include "mock_request.h"
#include "reply.h"

namespace sluice::mock {

inline constexpr std::string_view kMetadataTokenPath =
    "/computeMetadata/v1/instance/service-accounts/default/token";

// --gcp-service-account, --gcp-token-lifetime-s.
struct GcpAuthConfig {
  std::string service_account_file;  // empty: Vertex AI requests are not checked
  std::uint32_t token_lifetime_s = 3600;
};

// Plays Google's OAuth token endpoint for one service account and checks Vertex AI requests'
// access tokens:
// - POST <any path ending in /token>, form-encoded: grant_type
//   urn:ietf:params:oauth:grant-type:jwt-bearer and an `assertion` JWT, checked as Google
//   does: header alg RS256, the signature made with the account's private key, iss the
//   account's client_email, aud the token endpoint as requested (http://<Host><path>), scope
//   including cloud-platform, iat within 5 minutes of the mock's clock, exp no more than an
//   hour after iat and not past. Answers {"access_token":"ya29.mock-<n>","expires_in":<lifetime>,
//   "token_type":"Bearer"}, or 400 {"error":"invalid_grant","error_description":...}.
// - GET /computeMetadata/v1/instance/service-accounts/default/token plays the metadata server
//   (GCE, GKE Workload Identity): with Metadata-Flavor: Google and no X-Forwarded-For it answers
//   a token like the one above (no assertion: the workload is the account), else 403.
// - Any request whose path has /publishers/ (Vertex AI) must carry Authorization: Bearer with
//   a token it issued that has not expired, else 401 UNAUTHENTICATED in Google's shape.
// Thread-safe (issued tokens behind a mutex).
class GcpAuth {
 public:
  // Reads the service account file; an error says why it cannot be used.
  static Result<std::unique_ptr<GcpAuth>> load(const GcpAuthConfig& config);
  ~GcpAuth();

  Reply handle_token(const MockRequest& request, std::chrono::system_clock::time_point now);
  // nullopt when `request` carries a live token; else the 401.
  std::optional<Error> check(const MockRequest& request,
                             std::chrono::system_clock::time_point now) const;

  std::uint64_t issued() const;

 private:
  struct Key;
  GcpAuth(GcpAuthConfig config, std::string client_email, std::unique_ptr<Key> key);
  Reply issue(std::chrono::system_clock::time_point now);  // a new token, remembered
  std::optional<std::string> refuse_assertion(const MockRequest& request,
                                              std::string_view assertion,
                                              std::chrono::system_clock::time_point now) const;

  const GcpAuthConfig config_;
  const std::string client_email_;
  std::unique_ptr<Key> key_;
  mutable std::mutex mutex_;
  std::map<std::string, std::chrono::system_clock::time_point, std::less<>> tokens_;
  std::uint64_t issued_ = 0;
};

}  // namespace sluice::mock
