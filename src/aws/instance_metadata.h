#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "aws/credentials.h"
#include "aws/web_identity.h"
#include "core/result.h"

// EC2's instance metadata service, version 2 (IMDSv2: https://docs.aws.amazon.com/AWSEC2/
// latest/UserGuide/configuring-instance-metadata-service.html), the last step of the AWS SDKs'
// credential chain: the instance role's temporary keys. A session token first (PUT
// /latest/api/token with X-aws-ec2-metadata-token-ttl-seconds), then, each with
// X-aws-ec2-metadata-token, the role's name (GET /latest/meta-data/iam/security-credentials/)
// and its keys (GET .../security-credentials/<role>: {"Code":"Success","AccessKeyId",
// "SecretAccessKey","Token","Expiration"}). Pure: no I/O here.
namespace sluice::aws {

inline constexpr std::string_view kImdsTokenPath = "/latest/api/token";
inline constexpr std::string_view kImdsRolesPath = "/latest/meta-data/iam/security-credentials/";
inline constexpr std::string_view kImdsTokenTtlHeader = "X-aws-ec2-metadata-token-ttl-seconds";
inline constexpr std::string_view kImdsTokenHeader = "X-aws-ec2-metadata-token";

// The service's base URL: AWS_EC2_METADATA_SERVICE_ENDPOINT, else http://169.254.169.254;
// nullopt when AWS_EC2_METADATA_DISABLED is "true" (any case).
std::optional<InstanceMetadata> instance_metadata(const EnvLookup& env);

// The role named first in a security-credentials listing ("" when it names none).
std::string first_role(std::string_view listing);

// The keys in a role's answer: parse_container_answer's rules, and a "Code" other than
// "Success" is a refusal (kUpstreamStatus with that code).
Result<TemporaryCredentials> parse_instance_answer(int status, std::string_view body);

}  // namespace sluice::aws
