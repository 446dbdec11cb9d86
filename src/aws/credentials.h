#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "aws/sigv4.h"
#include "core/result.h"

namespace sluice::aws {

// Where a provider's AWS credentials come from, in the order the AWS SDKs look (the "standard
// credential provider chain" of the AWS SDKs and Tools reference guide), as far as Sluice
// follows it today:
//   1. the provider's own config (`bedrock.access_key_id`, `secret_access_key`, optional
//      `session_token`; `${ENV}` expansions included);
//   2. the environment: AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN;
//   3. the shared files of a profile (the provider's `bedrock.profile`, else AWS_PROFILE, else
//      "default"): AWS_SHARED_CREDENTIALS_FILE (default ~/.aws/credentials), section
//      [<profile>], then AWS_CONFIG_FILE (default ~/.aws/config), section [profile <profile>]
//      ([default] for the default profile), keys aws_access_key_id, aws_secret_access_key,
//      aws_session_token.
// Web identity (an OIDC token file exchanged for a role's temporary keys through STS
// AssumeRoleWithWebIdentity, as EKS gives pods) comes in three places of that chain: the
// provider's `bedrock.role_arn` (right after its static keys), AWS_ROLE_ARN with
// AWS_WEB_IDENTITY_TOKEN_FILE (after the environment's keys), and a profile's role_arn with
// web_identity_token_file. The chain then names the role, not keys (FoundCredentials::
// web_identity): the caller fetches and refreshes them (aws/web_identity.h). Last, a container
// credentials endpoint the environment names (ECS task roles, EKS Pod Identity:
// aws/container_credentials.h; FoundCredentials::container), then EC2's instance metadata
// service unless AWS_EC2_METADATA_DISABLED (aws/instance_metadata.h; FoundCredentials::
// instance: whether it answers is known only when it is asked). Other temporary credentials
// (source_profile chains, SSO) are not read yet: a profile that names only a role is reported,
// not guessed at.
struct CredentialSettings {
  std::string access_key_id{};
  std::string secret_access_key{};
  std::string session_token{};
  std::string profile{};
  std::string role_arn{};                 // web identity, with the token file below
  std::string web_identity_token_file{};  // else AWS_WEB_IDENTITY_TOKEN_FILE
  std::string role_session_name{};        // else AWS_ROLE_SESSION_NAME, else "sluice"
};

// A role to assume with a web identity token.
struct WebIdentity {
  std::string role_arn;
  std::string token_file;  // read again at every exchange: EKS rotates it
  std::string session_name;
};

// A container credentials endpoint (aws/container_credentials.h): ECS task roles, EKS Pod
// Identity.
struct ContainerEndpoint {
  std::string url;
  std::string authorization;       // the Authorization header's value, "" for none
  std::string authorization_file;  // else the file holding it, read at every fetch
};

// EC2's instance metadata service (aws/instance_metadata.h): an instance role.
struct InstanceMetadata {
  std::string endpoint;  // "http://169.254.169.254"
};

// The credentials found, and where (for the start-up log line: never the secret).
struct FoundCredentials {
  Credentials credentials;                  // empty when web_identity or container is set
  std::optional<WebIdentity> web_identity;  // the keys are the role's, fetched through STS
  std::string source;  // "config", "environment", "~/.aws/credentials [prod]"...
  std::optional<ContainerEndpoint> container{};  // the keys are the endpoint's, fetched
  std::optional<InstanceMetadata> instance{};    // the instance role's, fetched
};

// Reads an environment variable; std::getenv by default, a map in tests.
using EnvLookup = std::function<std::optional<std::string>(std::string_view name)>;
EnvLookup process_environment();

// The first complete set in the chain. An access key without its secret (or the reverse) at
// any step is an error naming that step, never a fall-through to the next one (a typo would
// otherwise sign with someone else's keys). kBadRequest when nothing is found, naming where it
// looked.
Result<FoundCredentials> find_credentials(const CredentialSettings& settings, const EnvLookup& env);

// The keys of section `section` of an AWS shared file's text (INI: [section], key = value,
// '#' and ';' comments, names case-sensitive, values trimmed), as found; nullopt when there is
// no such section.
struct ProfileKeys {
  std::string access_key_id;
  std::string secret_access_key;
  std::string session_token;
  std::string role_arn;  // with web_identity_token_file: web identity; alone: reported
  std::string web_identity_token_file;
  std::string role_session_name;
};
std::optional<ProfileKeys> read_profile(std::string_view text, std::string_view section);

}  // namespace sluice::aws
