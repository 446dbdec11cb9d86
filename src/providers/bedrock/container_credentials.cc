#include "providers/bedrock/container_credentials.h"

#include <utility>

#include "aws/container_credentials.h"
#include "core/shared_by_key.h"
#include "core/text_file.h"
#include "providers/background_fetch.h"
#include "spdlog/spdlog.h"

namespace sluice::providers {
namespace {

constexpr std::chrono::seconds kFetchTimeout{10};

SharedByKey<ContainerCredentials>& live_endpoints() {
  static auto* const endpoints = new SharedByKey<ContainerCredentials>;  // outlives every user
  return *endpoints;
}

}  // namespace

Result<std::shared_ptr<ContainerCredentials>> ContainerCredentials::shared(
    aws::ContainerEndpoint endpoint) {
  const std::string key =
      endpoint.url + "\n" + endpoint.authorization + "\n" + endpoint.authorization_file;
  return live_endpoints().get_or_make(key, [&]() -> Result<std::shared_ptr<ContainerCredentials>> {
    return std::make_shared<ContainerCredentials>(std::move(endpoint));
  });
}

ContainerCredentials::ContainerCredentials(aws::ContainerEndpoint endpoint)
    : endpoint_(std::move(endpoint)), refreshed_("sluice-awsctr", [this] { return fetch(); }) {}

Result<Expiring<aws::Credentials>> ContainerCredentials::fetch() const {
  std::string authorization = endpoint_.authorization;
  if (authorization.empty() && !endpoint_.authorization_file.empty()) {
    auto token = read_text_file(endpoint_.authorization_file);
    if (!token) {
      spdlog::warn("aws container credentials: cannot read the authorization token {}: {}",
                   endpoint_.authorization_file, token.error().message());
      return std::move(token).error();
    }
    authorization = std::move(*token);
    while (!authorization.empty() &&
           (authorization.back() == '\n' || authorization.back() == '\r')) {
      authorization.pop_back();
    }
  }
  const std::pair<std::string_view, std::string_view> headers[] = {
      {"Authorization", authorization}};
  const FetchAnswer answer = background_fetch(
      {.url = endpoint_.url,
       .method = FetchRequest::Method::kGet,
       .content_type = "",
       .accept = "application/json",
       .headers = authorization.empty()
                      ? std::span<const std::pair<std::string_view, std::string_view>>()
                      : std::span(headers),
       .body = ""},
      kFetchTimeout);
  if (answer.status == 0) {
    spdlog::warn("aws container credentials: {} did not answer: {}", endpoint_.url, answer.failure);
    return Error(ErrorKind::kUpstreamUnreachable, answer.failure);
  }
  auto keys = aws::parse_container_answer(answer.status, answer.body);
  if (!keys) {
    spdlog::warn("aws container credentials {}: {}", endpoint_.url, keys.error().message());
    return std::move(keys).error();
  }
  return Expiring<aws::Credentials>{.value = std::move(keys->credentials),
                                    .expires = keys->expires};
}

}  // namespace sluice::providers
