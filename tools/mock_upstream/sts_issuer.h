#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>

#include "aws/sigv4.h"
#include "mock_request.h"
#include "reply.h"

namespace sluice::mock {

// --aws-web-identity-token, --aws-sts-lifetime-s.
struct StsConfig {
  std::string web_identity_token;  // the one token AssumeRoleWithWebIdentity accepts
  std::string container_token;     // the one Authorization the container endpoint accepts
  std::string imds_role;           // the instance role the metadata service (IMDSv2) names
  std::uint32_t lifetime_s = 3600;
};

// Plays AWS STS's AssumeRoleWithWebIdentity (a form-encoded POST of the Query API to any path,
// Action=AssumeRoleWithWebIdentity) for one web identity token: a RoleArn, a RoleSessionName
// and exactly that WebIdentityToken get temporary keys (ASIAMOCK..., a secret, a session token)
// that expire after the configured lifetime, in STS's XML; anything else its <ErrorResponse>
// (InvalidIdentityToken, ValidationError). BedrockAuth then accepts SigV4 signatures made with
// issued keys that have not expired and carry their session token. Thread-safe.
class StsIssuer {
 public:
  explicit StsIssuer(StsConfig config) : config_(std::move(config)) {}

  static bool is_sts_request(const MockRequest& request);
  Reply handle(const MockRequest& request, std::chrono::system_clock::time_point now);
  // The container credentials endpoint (ECS, EKS Pod Identity): GET /v1/credentials with
  // exactly the configured Authorization gets keys like the ones above as
  // {"AccessKeyId","SecretAccessKey","Token","Expiration"}; else 401/403 with {"Code","Message"}.
  static bool is_container_request(const MockRequest& request);
  Reply handle_container(const MockRequest& request, std::chrono::system_clock::time_point now);
  // EC2's instance metadata service, IMDSv2 only: PUT /latest/api/token (with
  // X-aws-ec2-metadata-token-ttl-seconds 1..21600, without X-Forwarded-For) gets a session
  // token; with it in X-aws-ec2-metadata-token, GET /latest/meta-data/iam/security-credentials/
  // names the role and GET .../<role> gets keys like the ones above ({"Code":"Success",
  // "AccessKeyId","SecretAccessKey","Token","Expiration",...}); a GET without a live session
  // token is a 401, as IMDSv2 answers.
  static bool is_imds_request(const MockRequest& request);
  Reply handle_imds(const MockRequest& request, std::chrono::system_clock::time_point now);

  // The issued keys of `access_key_id`, and whether they have expired at `now`.
  struct Issued {
    aws::Credentials credentials;
    bool expired = false;
  };
  std::optional<Issued> find(std::string_view access_key_id,
                             std::chrono::system_clock::time_point now) const;

 private:
  const StsConfig config_;
  mutable std::mutex mutex_;
  struct Entry {
    aws::Credentials credentials;
    std::chrono::system_clock::time_point expires;
  };
  std::map<std::string, Entry, std::less<>> issued_;
  std::uint64_t count_ = 0;
  std::map<std::string, int, std::less<>> imds_sessions_;  // tokens handed out

  Entry issue(std::chrono::system_clock::time_point now);  // new keys; caller holds mutex_
};

}  // namespace sluice::mock
