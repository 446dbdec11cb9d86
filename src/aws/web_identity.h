#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

#include "aws/credentials.h"
#include "aws/sigv4.h"
#include "core/result.h"

// AWS STS AssumeRoleWithWebIdentity (https://docs.aws.amazon.com/STS/latest/APIReference/
// API_AssumeRoleWithWebIdentity.html): a web identity token (EKS writes one to the file
// AWS_WEB_IDENTITY_TOKEN_FILE names) exchanged for a role's temporary keys. The call itself is
// not signed: the token is the credential. A Query API: a form-encoded POST, an XML answer.
// Pure: no I/O here (the caller reads the token file and posts, from a background thread).
namespace sluice::aws {

// The STS endpoint for `region`: AWS_ENDPOINT_URL_STS's value when given (`override`), else the
// regional endpoint https://sts.<region>.amazonaws.com/ (the SDKs' default since 2022).
std::string sts_endpoint(std::string_view region, std::string_view override_url);

// The form body: Action=AssumeRoleWithWebIdentity&Version=2011-06-15&RoleArn=..&
// RoleSessionName=..&WebIdentityToken=..&DurationSeconds=<duration>.
std::string assume_role_form(const WebIdentity& identity, std::string_view token,
                             std::chrono::seconds duration = std::chrono::hours(1));

// A UTC time as AWS writes it: "2019-11-09T13:34:41Z", fractional seconds allowed
// ("...41.123Z"); nullopt for anything else.
std::optional<std::chrono::system_clock::time_point> parse_iso8601(const std::string& text);

// Temporary keys and when they expire.
struct TemporaryCredentials {
  Credentials credentials;
  std::chrono::system_clock::time_point expires;
};

// The keys in STS's answer (`status`, `body`). A refusal (<ErrorResponse><Error><Code>,
// <Message>) is kUpstreamStatus with code() the error code (InvalidIdentityToken,
// ExpiredTokenException, AccessDenied...) and STS's message; an answer without the keys or
// their expiry is kUpstreamProtocol.
Result<TemporaryCredentials> parse_assume_role_answer(int status, std::string_view body);

}  // namespace sluice::aws
