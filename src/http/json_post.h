#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/result.h"
#include "providers/background_fetch.h"

namespace sluice::http {

// What one POST came to: an HTTP status, or none (status 0) and why.
struct PostAnswer {
  int status = 0;  // 0: no answer (transport failure or timeout; `failure` says which)
  std::string failure;
  bool timed_out = false;
  std::optional<std::chrono::milliseconds> retry_after;  // Retry-After in seconds, if any
  std::string body;                                      // at most 64 KiB
};

// POSTs application/json bodies (another Content-Type when `headers` name one) to one http:// or
// https:// URL (the certificate verified against the system store) from a background thread:
// blocking, with its own io_context, never on a worker. The connection is kept alive between posts
// when the server allows it, and a kept-alive connection the server closed meanwhile gets one fresh
// try. Each post (resolve, connect, TLS, write, read of at most 64 KiB) is bounded by its deadline.
// One thread at a time. The only place background HTTP clients instantiate Beast's client templates
// (each copy costs about 40 s of compile time, two minutes under ASan).
class JsonPoster {
 public:
  using Headers = std::vector<std::pair<std::string, std::string>>;

  // Fails when `url` is not a usable http(s) URL.
  static Result<JsonPoster> to(std::string_view url, Headers headers = {});
  JsonPoster(JsonPoster&&) noexcept;
  JsonPoster& operator=(JsonPoster&&) noexcept;
  ~JsonPoster();

  PostAnswer post(std::string_view body, std::chrono::steady_clock::time_point deadline);
  // Sends GETs (no body, no Content-Type: a metadata server's token endpoint) or PUTs from now
  // on; POSTs by default.
  void use_method(providers::FetchRequest::Method method);
  void close();  // drops the kept-alive connection

 private:
  struct Connection;
  explicit JsonPoster(std::unique_ptr<Connection> connection);
  std::unique_ptr<Connection> connection_;
};

// One POST of `body` to `url` on a fresh connection, within `timeout`: the answer's HTTP
// status. Transport failures and timeouts are an Error (kUpstreamUnreachable /
// kUpstreamTimeout). For background threads (budget webhooks).
Result<int> post_json(const std::string& url, const std::string& body,
                      std::chrono::milliseconds timeout);

// providers::BackgroundFetch (providers/background_fetch.h), installed by the server: one POST on
// a fresh connection.
providers::FetchAnswer fetch_in_background(const providers::FetchRequest& request,
                                           std::chrono::milliseconds timeout);

}  // namespace sluice::http
