#include "providers/vertex/google_token_source.h"

#include "core/shared_by_key.h"
#include "providers/background_fetch.h"
#include "spdlog/spdlog.h"

namespace sluice::providers {
namespace {

using std::chrono::system_clock;

constexpr std::chrono::seconds kFetchTimeout{10};

// Live sources by what identifies their credentials (never destroyed: outlives every source).
SharedByKey<GoogleTokenSource>& live_sources() {
  static auto* const sources = new SharedByKey<GoogleTokenSource>;
  return *sources;
}

// Everything the token depends on: the same key means the same tokens.
std::string identity_of(const gcp::GoogleCredentials& c) {
  std::string key = c.token_uri();
  key.push_back('\n');
  if (const auto* account = std::get_if<gcp::ServiceAccountKey>(&c.identity)) {
    key.append(account->client_email).append("\n").append(account->private_key_id);
    key.append("\n").append(account->private_key);
  } else if (const auto* user = std::get_if<gcp::AuthorizedUser>(&c.identity)) {
    key.append(user->client_id).append("\n").append(user->refresh_token);
  }  // the metadata server: its token_uri says it all
  return key;
}

}  // namespace

Result<std::shared_ptr<GoogleTokenSource>> GoogleTokenSource::shared(
    gcp::GoogleCredentials credentials) {
  const std::string key = identity_of(credentials);
  return live_sources().get_or_make(key, [&]() -> Result<std::shared_ptr<GoogleTokenSource>> {
    auto requester = gcp::TokenRequester::make(std::move(credentials));
    if (!requester) {
      return std::move(requester).error();
    }
    return std::make_shared<GoogleTokenSource>(std::move(*requester));
  });
}

GoogleTokenSource::GoogleTokenSource(gcp::TokenRequester requester)
    : requester_(std::move(requester)), refreshed_("sluice-gtoken", [this] { return fetch(); }) {}

Result<Expiring<std::string>> GoogleTokenSource::fetch() const {
  const auto now = system_clock::now();
  auto request = requester_.request(now);
  if (!request) {
    return std::move(request).error();
  }
  static constexpr std::pair<std::string_view, std::string_view> kMetadataFlavor[] = {
      {"Metadata-Flavor", "Google"}};
  const FetchAnswer answer = background_fetch(
      {.url = request->url,
       .method = request->metadata ? FetchRequest::Method::kGet : FetchRequest::Method::kPost,
       .content_type = request->metadata ? "" : "application/x-www-form-urlencoded",
       .accept = "application/json",
       .headers = request->metadata
                      ? std::span(kMetadataFlavor)
                      : std::span<const std::pair<std::string_view, std::string_view>>(),
       .body = request->form},
      kFetchTimeout);
  const std::string& source = requester_.credentials().source;
  if (answer.status == 0) {
    spdlog::warn("google credentials {}: the token endpoint {} did not answer: {}", source,
                 request->url, answer.failure);
    return Error(ErrorKind::kUpstreamUnreachable, answer.failure);
  }
  auto token = gcp::parse_token_answer(answer.status, answer.body, now);
  if (!token) {
    spdlog::warn("google credentials {}: {}", source, token.error().message());
    return std::move(token).error();
  }
  return Expiring<std::string>{.value = "Bearer " + token->token, .expires = token->expires};
}

}  // namespace sluice::providers
