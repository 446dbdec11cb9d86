#include "providers/bedrock/instance_credentials.h"

#include <span>
#include <string>
#include <utility>

#include "aws/instance_metadata.h"
#include "core/shared_by_key.h"
#include "providers/background_fetch.h"
#include "spdlog/spdlog.h"

namespace sluice::providers {
namespace {

// The service answers on the instance itself; a slow one is not there.
constexpr std::chrono::seconds kFetchTimeout{2};
using HeaderPair = std::pair<std::string_view, std::string_view>;

SharedByKey<InstanceCredentials>& live_services() {
  static auto* const services = new SharedByKey<InstanceCredentials>;  // outlives every user
  return *services;
}

// One step's answer, or the Error that ends this fetch.
Result<std::string> ask(const aws::InstanceMetadata& service, FetchRequest request,
                        std::string_view what) {
  const std::string url = service.endpoint + std::string(request.url);
  request.url = url;
  FetchAnswer answer = background_fetch(request, kFetchTimeout);
  if (answer.status == 0) {
    return Error(ErrorKind::kUpstreamUnreachable, "the instance metadata service did not answer " +
                                                      std::string(what) + ": " + answer.failure);
  }
  if (answer.status < 200 || answer.status >= 300) {
    return Error(ErrorKind::kUpstreamStatus, "the instance metadata service answered " +
                                                 std::to_string(answer.status) + " to " +
                                                 std::string(what))
        .with_code("instance_metadata_refused");
  }
  return std::move(answer.body);
}

}  // namespace

Result<std::shared_ptr<InstanceCredentials>> InstanceCredentials::shared(
    aws::InstanceMetadata service) {
  const std::string key = service.endpoint;
  return live_services().get_or_make(key, [&]() -> Result<std::shared_ptr<InstanceCredentials>> {
    return std::make_shared<InstanceCredentials>(std::move(service));
  });
}

InstanceCredentials::InstanceCredentials(aws::InstanceMetadata service)
    : service_(std::move(service)), refreshed_("sluice-awsimds", [this] { return fetch(); }) {}

Result<Expiring<aws::Credentials>> InstanceCredentials::fetch() const {
  const HeaderPair ttl[] = {{aws::kImdsTokenTtlHeader, "21600"}};  // six hours, the most
  auto token = ask(service_,
                   {.url = aws::kImdsTokenPath,
                    .method = FetchRequest::Method::kPut,
                    .content_type = "",
                    .accept = "",
                    .headers = ttl,
                    .body = ""},
                   "the session token request");
  if (!token) {
    spdlog::warn("aws instance role: {}", token.error().message());
    return std::move(token).error();
  }
  const HeaderPair session[] = {{aws::kImdsTokenHeader, *token}};
  const auto get = [&](std::string_view path, std::string_view what) {
    return ask(service_,
               {.url = path,
                .method = FetchRequest::Method::kGet,
                .content_type = "",
                .accept = "",
                .headers = session,
                .body = ""},
               what);
  };
  auto listing = get(aws::kImdsRolesPath, "the role listing");
  if (!listing) {
    spdlog::warn("aws instance role: {}", listing.error().message());
    return std::move(listing).error();
  }
  const std::string role = aws::first_role(*listing);
  if (role.empty()) {
    return Error(ErrorKind::kUpstreamStatus, "the instance has no role (no IAM instance profile)")
        .with_code("no_instance_role");
  }
  const std::string path = std::string(aws::kImdsRolesPath) + role;
  auto answer = get(path, "the role's keys");
  if (!answer) {
    spdlog::warn("aws instance role {}: {}", role, answer.error().message());
    return std::move(answer).error();
  }
  auto keys = aws::parse_instance_answer(200, *answer);
  if (!keys) {
    spdlog::warn("aws instance role {}: {}", role, keys.error().message());
    return std::move(keys).error();
  }
  return Expiring<aws::Credentials>{.value = std::move(keys->credentials),
                                    .expires = keys->expires};
}

}  // namespace sluice::providers
