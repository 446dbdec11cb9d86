#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "aws/credentials.h"
#include "aws/web_identity.h"
#include "core/result.h"

// The container credential provider of the AWS SDKs (ECS task roles, EKS Pod Identity): the
// platform serves the role's temporary keys over HTTP on a link-local address and names it in
// the environment. Pure: no I/O here (the caller GETs, from a background thread).
//   AWS_CONTAINER_CREDENTIALS_RELATIVE_URI  ECS: http://169.254.170.2<relative>
//   AWS_CONTAINER_CREDENTIALS_FULL_URI      EKS Pod Identity (http://169.254.170.23/v1/
//                                           credentials) and others
//   AWS_CONTAINER_AUTHORIZATION_TOKEN(_FILE) the Authorization header's value, or the file
//                                           holding it (EKS rotates it: read at every fetch)
// The answer: {"AccessKeyId","SecretAccessKey","Token","Expiration"} (JSON).
namespace sluice::aws {

// ContainerEndpoint lives in aws/credentials.h (FoundCredentials names one).

// The endpoint the environment names, nullopt when it names none. As the SDKs do, a full URI
// over plain http must point at a loopback host or at the ECS / EKS link-local addresses
// (169.254.170.2, 169.254.170.23, fd00:ec2::23): anything else is a kBadRequest, so a
// poisoned variable cannot send the authorization token to another host.
Result<std::optional<ContainerEndpoint>> container_endpoint(const EnvLookup& env);

// The keys in the endpoint's answer (`status`, `body`). A non-2xx answer is kUpstreamStatus
// (its "Code"/"Message" when it has them); an answer without the keys or their expiry is
// kUpstreamProtocol.
Result<TemporaryCredentials> parse_container_answer(int status, std::string_view body);

}  // namespace sluice::aws
