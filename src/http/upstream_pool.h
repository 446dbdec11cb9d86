#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <variant>

#include <boost/asio/ssl/stream.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>

#include "core/result.h"
#include "http/connection_limit.h"
#include "http/net.h"
#include "providers/endpoint.h"

namespace sluice::http {

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
// worker's io_context and is only touched from there (other workers reach it through posts).
//
// acquire() returns an idle connection, or opens a new one while the provider's instance-wide
// ConnectionLimit has room, or waits up to `acquire_timeout` for a connection or a slot (from
// this worker's releases, or from another worker's via the limit); after that it fails with
// kRateLimited (429 + Retry-After) rather than queueing without bound.
//
// A connection is reused only when its previous response was read to its end, the server
// allowed keep-alive and nothing is left in its read buffer (bytes after a response are a
// broken or hostile upstream; reusing the connection would hand them to the next caller).
class UpstreamPool : public std::enable_shared_from_this<UpstreamPool> {
 public:
  UpstreamPool(net::any_io_executor executor, std::shared_ptr<const providers::Endpoint> endpoint,
               std::shared_ptr<ConnectionLimit> limit);
  ~UpstreamPool();
  UpstreamPool(const UpstreamPool&) = delete;
  UpstreamPool& operator=(const UpstreamPool&) = delete;

  // Completes on this pool's executor. `connect_timeout` bounds resolve + connect + TLS.
  // `fresh` skips idle connections (used to retry after a stale keep-alive connection).
  Awaitable<Result<std::unique_ptr<UpstreamConnection>>> acquire(
      std::chrono::milliseconds connect_timeout, bool fresh = false);

  // Gives a connection back. `reusable` only when the response was read completely and
  // the server allowed keep-alive; otherwise (or with bytes left in its buffer) it is closed.
  void release(std::unique_ptr<UpstreamConnection> conn, bool reusable);

  const providers::Endpoint& endpoint() const { return *endpoint_; }
  std::uint32_t open_connections() const { return open_; }
  // Any thread (read by the ConnectionLimit when another pool waits).
  std::size_t idle_count() const { return idle_count_.load(std::memory_order_relaxed); }

  // Closes idle connections and fails future waits; in-use connections close on release.
  void shutdown();

  // Any thread: a slot may be free in the limit; hand it to the first waiter.
  void post_slot_available();
  // Any thread: close the oldest idle connection (another worker needs its slot).
  void post_close_one_idle();

 private:
  struct Waiter;
  Awaitable<Result<std::unique_ptr<UpstreamConnection>>> connect(std::chrono::milliseconds timeout);
  std::unique_ptr<UpstreamConnection> take_idle();
  void close_connection_slot();
  void on_slot_available();
  void sync_idle_count() { idle_count_.store(idle_.size(), std::memory_order_relaxed); }

  net::any_io_executor executor_;
  std::shared_ptr<const providers::Endpoint> endpoint_;
  std::shared_ptr<ConnectionLimit> limit_;
  std::uint32_t open_ = 0;  // this pool's connections: idle + in use + being connected
  bool shut_down_ = false;
  std::deque<std::unique_ptr<UpstreamConnection>> idle_;
  std::atomic<std::size_t> idle_count_{0};
  std::deque<Waiter*> waiters_;
};

}  // namespace sluice::http
