#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include "core/result.h"

// Google Cloud credentials as Vertex AI callers use them (https://google.aip.dev/auth/4110,
// "Application Default Credentials"), exchanged for OAuth 2.0 access tokens:
//   - a service account key file (`"type": "service_account"`): a JWT assertion signed RS256
//     with the key's private key (RFC 7523 section 2.1; https://developers.google.com/identity/
//     protocols/oauth2/service-account#authorizingrequests), POSTed to the key's token_uri as
//     grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer;
//   - an authorized user file (`"type": "authorized_user"`, what `gcloud auth application-default
//     login` writes): its refresh token POSTed as grant_type=refresh_token with the client id
//     and secret (RFC 6749 section 6);
//   - the metadata server of the machine or pod (GCE, GKE Workload Identity, Cloud Run): GET
//     http://<host>/computeMetadata/v1/instance/service-accounts/default/token with
//     `Metadata-Flavor: Google` (https://cloud.google.com/compute/docs/access/
//     authenticate-workloads#applications); the identity is the workload's, nothing secret is
//     configured.
// The answer is {"access_token","expires_in","token_type":"Bearer"}. Pure: no I/O here (the
// caller posts what token_request() writes, from a background thread).
namespace sluice::gcp {

inline constexpr std::string_view kCloudPlatformScope =
    "https://www.googleapis.com/auth/cloud-platform";
inline constexpr std::string_view kDefaultTokenUri = "https://oauth2.googleapis.com/token";

struct ServiceAccountKey {
  std::string client_email;
  std::string private_key;  // PEM (PKCS#8)
  std::string private_key_id;
  std::string token_uri;
  std::string project_id;
};

struct AuthorizedUser {
  std::string client_id;
  std::string client_secret;
  std::string refresh_token;
  std::string token_uri;
  std::string quota_project_id;
};

// The metadata server at `host` ("metadata.google.internal", or GCE_METADATA_HOST's host:port).
struct MetadataServer {
  std::string host;
  std::string
      token_uri;  // http://<host>/computeMetadata/v1/instance/service-accounts/default/token
};

inline constexpr std::string_view kMetadataHost = "metadata.google.internal";

// The metadata server credentials for `host`.
struct GoogleCredentials;
GoogleCredentials metadata_server(std::string_view host);

struct GoogleCredentials {
  std::variant<ServiceAccountKey, AuthorizedUser, MetadataServer> identity;
  std::string source;  // the file it came from, for messages (never a secret)

  // The project the credentials belong to, "" when the file does not say.
  std::string_view project_id() const;
  const std::string& token_uri() const;
};

// Reads a credentials file's text. kBadRequest naming `source` for anything else (another
// "type", a missing member, a private key OpenSSL cannot read).
Result<GoogleCredentials> parse_credentials(std::string_view json, std::string_view source);

// Reads an environment variable (std::getenv by default; a map in tests).
using EnvLookup = std::function<std::optional<std::string>(std::string_view name)>;
EnvLookup process_environment();

// Where a provider's Google credentials come from, in this order: the configured file, the
// configured metadata server (`metadata_host`), GOOGLE_APPLICATION_CREDENTIALS,
// $HOME/.config/gcloud/application_default_credentials.json when it exists, the metadata server
// GCE_METADATA_HOST names (the variable Google's client libraries read). kBadRequest saying
// where it looked when none is found or the file cannot be read.
Result<GoogleCredentials> find_credentials(std::string_view configured, const EnvLookup& env,
                                           std::string_view metadata_host = {});

// One token request: where to POST, and its application/x-www-form-urlencoded body; or, for
// the metadata server (`metadata`), a GET with Metadata-Flavor: Google.
struct TokenRequest {
  std::string url;
  std::string form;
  bool metadata = false;
};

// An access token and when it expires.
struct AccessToken {
  std::string token;
  std::chrono::system_clock::time_point expires;
};

// Writes token requests for one set of credentials (its private key parsed once). Immutable
// after make(); request() is const and thread-safe.
class TokenRequester {
 public:
  static Result<TokenRequester> make(GoogleCredentials credentials,
                                     std::string scope = std::string(kCloudPlatformScope));
  TokenRequester(TokenRequester&&) noexcept;
  TokenRequester& operator=(TokenRequester&&) noexcept;
  ~TokenRequester();

  // The request for a token at `now`: a service account's assertion is issued at now and
  // expires an hour later (the longest Google accepts).
  Result<TokenRequest> request(std::chrono::system_clock::time_point now) const;

  const GoogleCredentials& credentials() const { return credentials_; }

 private:
  struct Key;
  TokenRequester(GoogleCredentials credentials, std::string scope, std::unique_ptr<Key> key);

  GoogleCredentials credentials_;
  std::string scope_;
  std::unique_ptr<Key> key_;  // service accounts only
};

// The token in a token endpoint's answer (`status`, `body`) received at `now`. A refusal
// (RFC 6749 section 5.2: {"error","error_description"}) is kUpstreamStatus with the endpoint's
// error code and description: nothing of the credentials is in either.
Result<AccessToken> parse_token_answer(int status, std::string_view body,
                                       std::chrono::system_clock::time_point now);

// The compact JWS of `claims` (a JSON object's text) signed RS256 with `private_key_pem`, its
// header {"alg":"RS256","typ":"JWT"} plus "kid" when `key_id` is not empty. Exposed for tests.
Result<std::string> sign_jwt_rs256(std::string_view private_key_pem, std::string_view key_id,
                                   std::string_view claims);

}  // namespace sluice::gcp
