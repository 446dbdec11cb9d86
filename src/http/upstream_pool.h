#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <variant>

#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>

#include "config/config.h"
#include "core/result.h"
#include "http/net.h"

namespace sluice::http {

// Where and how to connect for one provider; built once per config snapshot, shared
// read-only by every worker.
struct UpstreamEndpoint {
  std::string provider_id;
  std::string host;
  std::uint16_t port = 0;
  bool tls = false;
  std::string server_name;                 // SNI and certificate name
  std::shared_ptr<net::ssl::context> ssl;  // set when tls
  config::PoolSettings pool;
  // Identity of the settings above; a worker rebuilds its pool when it changes.
  std::string fingerprint;
};

// One keep-alive connection to an upstream. Owned by exactly one request while in use and
// by the pool while idle.
struct UpstreamConnection {
  using PlainStream = beast::tcp_stream;
  using TlsStream = beast::ssl_stream<beast::tcp_stream>;

  explicit UpstreamConnection(PlainStream s) : stream(std::move(s)) {}
  explicit UpstreamConnection(TlsStream s) : stream(std::move(s)) {}

  beast::tcp_stream& lowest() {
    return std::visit([](auto& s) -> beast::tcp_stream& { return beast::get_lowest_layer(s); },
                      stream);
  }

  std::variant<PlainStream, TlsStream> stream;
  beast::flat_buffer buffer;
  // Body bytes land here before they are appended to the caller's string: one allocation
  // per connection, never zero-filled.
  static constexpr std::size_t kScratchBytes = 16 * 1024;
  std::unique_ptr<char[]> scratch{new char[kScratchBytes]};
  std::chrono::steady_clock::time_point idle_since{};
  std::uint64_t uses = 0;  // requests served; > 0 means "reused", so may be stale
};

// Per-worker, per-provider pool of upstream connections. Not thread-safe: it lives on its
// worker's io_context and is only touched from there.
//
// acquire() returns an idle connection, or opens a new one while fewer than the worker's
// share of `max_connections` are open, or waits up to `acquire_timeout` for one to be
// released; after that it fails with kRateLimited (429 + Retry-After) rather than queueing
// without bound. The number of waiters is bounded by the acquire timeout and the caller's
// own concurrency limits.
class UpstreamPool {
 public:
  UpstreamPool(net::any_io_executor executor, std::shared_ptr<const UpstreamEndpoint> endpoint,
               std::uint32_t max_open);
  ~UpstreamPool();
  UpstreamPool(const UpstreamPool&) = delete;
  UpstreamPool& operator=(const UpstreamPool&) = delete;

  // Completes on this pool's executor. `connect_timeout` bounds resolve + connect + TLS.
  // `fresh` skips idle connections (used to retry after a stale keep-alive connection).
  Awaitable<Result<std::unique_ptr<UpstreamConnection>>> acquire(
      std::chrono::milliseconds connect_timeout, bool fresh = false);

  // Gives a connection back. `reusable` only when the response was read completely and
  // the server allowed keep-alive; otherwise the connection is closed.
  void release(std::unique_ptr<UpstreamConnection> conn, bool reusable);

  const UpstreamEndpoint& endpoint() const { return *endpoint_; }
  std::uint32_t open_connections() const { return open_; }
  std::size_t idle_connections() const { return idle_.size(); }

  // Closes idle connections and fails future waits; in-use connections close on release.
  void shutdown();

 private:
  struct Waiter;
  Awaitable<Result<std::unique_ptr<UpstreamConnection>>> connect(std::chrono::milliseconds timeout);
  std::unique_ptr<UpstreamConnection> take_idle();
  void wake_one();

  net::any_io_executor executor_;
  std::shared_ptr<const UpstreamEndpoint> endpoint_;
  std::uint32_t max_open_;
  std::uint32_t open_ = 0;  // idle + in use + being connected
  bool shut_down_ = false;
  std::deque<std::unique_ptr<UpstreamConnection>> idle_;
  std::deque<Waiter*> waiters_;
};

// Builds the TLS client context for an endpoint: TLS 1.2+, peer verification against the
// system store or `ca_file`. Throws on unreadable CA files (config load time only).
std::shared_ptr<net::ssl::context> make_client_tls_context(const config::TlsSettings& tls);

}  // namespace sluice::http
