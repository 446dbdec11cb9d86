#include "providers/vertex/google_token_source.h"

#include <map>
#include <mutex>

#include "providers/background_fetch.h"
#include "spdlog/spdlog.h"

namespace sluice::providers {
namespace {

using std::chrono::system_clock;

constexpr std::chrono::seconds kFetchTimeout{10};

// Live sources by what identifies their credentials. Touched when snapshots are built and
// sources die, never by a request.
struct Registry {
  std::mutex mutex;
  std::map<std::string, std::weak_ptr<GoogleTokenSource>, std::less<>> sources;
};
Registry& registry() {
  static Registry* const r = new Registry;  // outlives every source (never destroyed)
  return *r;
}

// Everything the token depends on: the same key means the same tokens.
std::string identity_of(const gcp::GoogleCredentials& c) {
  std::string key = c.token_uri();
  key.push_back('\n');
  if (const auto* account = std::get_if<gcp::ServiceAccountKey>(&c.identity)) {
    key.append(account->client_email).append("\n").append(account->private_key_id);
    key.append("\n").append(account->private_key);
  } else {
    const auto& user = std::get<gcp::AuthorizedUser>(c.identity);
    key.append(user.client_id).append("\n").append(user.refresh_token);
  }
  return key;
}

}  // namespace

Result<std::shared_ptr<GoogleTokenSource>> GoogleTokenSource::shared(
    gcp::GoogleCredentials credentials) {
  std::string key = identity_of(credentials);
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  if (auto it = r.sources.find(key); it != r.sources.end()) {
    if (auto live = it->second.lock()) {
      return live;
    }
  }
  auto requester = gcp::TokenRequester::make(std::move(credentials));
  if (!requester) {
    return std::move(requester).error();
  }
  auto source = std::make_shared<GoogleTokenSource>(std::move(*requester), key);
  r.sources[std::move(key)] = source;
  return source;
}

GoogleTokenSource::GoogleTokenSource(gcp::TokenRequester requester, std::string key)
    : requester_(std::move(requester)),
      key_(std::move(key)),
      refreshed_("sluice-gtoken", [this] { return fetch(); }) {}

GoogleTokenSource::~GoogleTokenSource() {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  if (auto it = r.sources.find(key_); it != r.sources.end() && it->second.expired()) {
    r.sources.erase(it);
  }
}

Result<Expiring<std::string>> GoogleTokenSource::fetch() const {
  const auto now = system_clock::now();
  auto request = requester_.request(now);
  if (!request) {
    return std::move(request).error();
  }
  const FetchAnswer answer = background_fetch({.url = request->url,
                                               .content_type = "application/x-www-form-urlencoded",
                                               .accept = "application/json",
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
