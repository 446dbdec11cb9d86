#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include "core/refreshed.h"
#include "core/result.h"
#include "gcp/google_credentials.h"

namespace sluice::providers {

// The OAuth access tokens of one set of Google credentials, fetched from their token endpoint
// by a thread of its own (providers/background_fetch.h) and refreshed 5 minutes before they
// expire, off the request path. Shared by every Vertex provider of every snapshot that names
// the same credentials, so a config reload keeps serving the token it had rather than waiting
// for a new one. Thread-safe.
class GoogleTokenSource {
 public:
  // The source for `credentials`: the live one when another provider uses the same, else a new
  // one (its first fetch started).
  static Result<std::shared_ptr<GoogleTokenSource>> shared(gcp::GoogleCredentials credentials);

  explicit GoogleTokenSource(gcp::TokenRequester requester);

  // "Bearer <token>" for an Authorization header, null until the first token arrived. Valid
  // while this source lives (core/refreshed.h).
  const std::string* authorization() const { return refreshed_.current(); }
  // Waits at most `timeout` for the first token: the fetch's error, or nullopt once there.
  std::optional<Error> wait_first(std::chrono::milliseconds timeout) const {
    return refreshed_.wait_first(timeout);
  }
  std::uint64_t fetches() const { return refreshed_.fetches(); }

 private:
  Result<Expiring<std::string>> fetch() const;

  const gcp::TokenRequester requester_;
  const std::string key_;             // in the shared registry
  Refreshed<std::string> refreshed_;  // last: its thread starts fetching at once
};

}  // namespace sluice::providers
