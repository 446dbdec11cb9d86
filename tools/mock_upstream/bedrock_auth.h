#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "aws/sigv4.h"
#include "core/error.h"
#include "mock_request.h"
#include "sts_issuer.h"

namespace sluice::mock {

// --aws-access-key-id, --aws-secret-access-key, --aws-region, --aws-bearer-token.
struct BedrockAuthConfig {
  std::string access_key_id;      // empty: SigV4 requests are not checked
  std::string secret_access_key;  // given with access_key_id
  std::string region = "us-east-1";
  std::string bearer_token;  // empty: Authorization: Bearer is not accepted (when checking)

  // Whether requests are checked at all.
  bool enabled() const { return !access_key_id.empty() || !bearer_token.empty(); }
};

// What a request's Authorization header says it is.
enum class AuthScheme : std::uint8_t {
  kNone,    // no Authorization header
  kSigV4,   // AWS4-HMAC-SHA256 ...
  kBearer,  // Bearer <token> (Bedrock API keys)
  kOther,
};

// The verdict on one request.
struct AuthOutcome {
  AuthScheme scheme = AuthScheme::kNone;
  // A check was made (the config is enabled); `error` then says whether it failed.
  bool checked = false;
  // A 403 whose code() is the x-amzn-errortype value (InvalidSignatureException,
  // IncompleteSignatureException, UnrecognizedClientException,
  // MissingAuthenticationTokenException) and whose message is AWS's wording.
  std::optional<Error> error;
};

// Checks requests the way AWS authenticates Bedrock Runtime calls: a SigV4 signature (IAM
// user guide, "Create a signed AWS API request") for service "bedrock" in the configured
// region, recomputed with aws::Signer over the headers the request lists in SignedHeaders,
// its path as received, its query, its body and its x-amz-date (at most 15 minutes from the
// mock's clock); an x-amz-security-token must be among the signed headers. Or, when a bearer
// token is configured, Authorization: Bearer with exactly that token. Immutable after
// construction; check() is const and safe from any number of threads.
class BedrockAuth {
 public:
  // `sts`: temporary keys it issued are accepted too (null: none).
  explicit BedrockAuth(BedrockAuthConfig config, const StsIssuer* sts = nullptr);

  // The scheme of `request` and, when the config is enabled, the verdict at `now`. Pure:
  // no I/O, completes inline.
  AuthOutcome check(const MockRequest& request, std::chrono::system_clock::time_point now) const;

  // The largest accepted difference between x-amz-date and the mock's clock.
  static constexpr std::chrono::minutes kMaxSkew{15};

 private:
  std::optional<Error> check_sigv4(const MockRequest& request, std::string_view authorization,
                                   std::chrono::system_clock::time_point now) const;

  BedrockAuthConfig config_;
  const StsIssuer* sts_;
  aws::Signer signer_;
  // For requests that sign x-amz-content-sha256.
  aws::Signer content_sha256_signer_;
};

}  // namespace sluice::mock
