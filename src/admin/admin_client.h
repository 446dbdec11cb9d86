#pragma once

#include <chrono>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/result.h"

namespace sluice::admin {

// One answer of the admin listener.
struct ClientResponse {
  int status = 0;
  std::string body;
};

// A minimal blocking HTTP/1.1 client for the admin API, as the CLI uses it: plain TCP (the
// admin listener has no TLS; reach a remote one through a tunnel), one request per connection,
// the whole exchange bounded by `timeout`, answers up to 16 MiB. `base_url` is
// "http://host:port" with an optional path prefix. `headers` are sent as given (the caller puts
// the admin credential there; it is never part of an error message). Errors: kBadRequest for a
// URL it cannot use, kUnavailable when the listener cannot be reached or does not answer.
Result<ClientResponse> admin_request(
    std::string_view base_url, std::string_view method, std::string_view target,
    std::string_view body, const std::vector<std::pair<std::string, std::string>>& headers,
    std::chrono::milliseconds timeout);

}  // namespace sluice::admin
