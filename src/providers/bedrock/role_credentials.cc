#include "providers/bedrock/role_credentials.h"

#include "aws/web_identity.h"
#include "core/shared_by_key.h"
#include "core/text_file.h"
#include "providers/background_fetch.h"
#include "spdlog/spdlog.h"

namespace sluice::providers {
namespace {

constexpr std::chrono::seconds kFetchTimeout{10};

SharedByKey<RoleCredentials>& live_roles() {
  static auto* const roles = new SharedByKey<RoleCredentials>;  // outlives every user
  return *roles;
}

}  // namespace

Result<std::shared_ptr<RoleCredentials>> RoleCredentials::shared(aws::WebIdentity identity,
                                                                 std::string sts_url) {
  const std::string key = identity.role_arn + "\n" + identity.token_file + "\n" +
                          identity.session_name + "\n" + sts_url;
  return live_roles().get_or_make(key, [&]() -> Result<std::shared_ptr<RoleCredentials>> {
    return std::make_shared<RoleCredentials>(std::move(identity), std::move(sts_url));
  });
}

RoleCredentials::RoleCredentials(aws::WebIdentity identity, std::string sts_url)
    : identity_(std::move(identity)),
      sts_url_(std::move(sts_url)),
      refreshed_("sluice-awsrole", [this] { return fetch(); }) {}

Result<Expiring<aws::Credentials>> RoleCredentials::fetch() const {
  auto token = read_text_file(identity_.token_file);
  if (!token) {
    spdlog::warn("aws role {}: cannot read the web identity token {}: {}", identity_.role_arn,
                 identity_.token_file, token.error().message());
    return std::move(token).error();
  }
  while (!token->empty() && (token->back() == '\n' || token->back() == '\r')) {
    token->pop_back();
  }
  const std::string form = aws::assume_role_form(identity_, *token);
  const FetchAnswer answer = background_fetch({.url = sts_url_,
                                               .method = FetchRequest::Method::kPost,
                                               .content_type = "application/x-www-form-urlencoded",
                                               .accept = "text/xml",
                                               .headers = {},
                                               .body = form},
                                              kFetchTimeout);
  if (answer.status == 0) {
    spdlog::warn("aws role {}: STS {} did not answer: {}", identity_.role_arn, sts_url_,
                 answer.failure);
    return Error(ErrorKind::kUpstreamUnreachable, answer.failure);
  }
  auto keys = aws::parse_assume_role_answer(answer.status, answer.body);
  if (!keys) {
    spdlog::warn("aws role {}: {}", identity_.role_arn, keys.error().message());
    return std::move(keys).error();
  }
  return Expiring<aws::Credentials>{.value = std::move(keys->credentials),
                                    .expires = keys->expires};
}

}  // namespace sluice::providers
