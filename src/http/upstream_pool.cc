#include "http/upstream_pool.h"

#include <algorithm>

#include <boost/asio/connect.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl/host_name_verification.hpp>
#include <boost/asio/ssl/verify_mode.hpp>
#include <sys/socket.h>

#include "http/resolve.h"

namespace sluice::http {

struct UpstreamPool::Waiter {
  explicit Waiter(const net::any_io_executor& ex) : timer(ex) {}
  net::steady_timer timer;
  std::unique_ptr<UpstreamConnection> conn;  // handed over by release()
  bool slot = false;                         // permission to open a new connection
};

UpstreamPool::UpstreamPool(net::any_io_executor executor,
                           std::shared_ptr<const providers::Endpoint> endpoint,
                           std::shared_ptr<ConnectionLimit> limit)
    : executor_(std::move(executor)), endpoint_(std::move(endpoint)), limit_(std::move(limit)) {}

UpstreamPool::~UpstreamPool() { shutdown(); }

void UpstreamPool::close_connection_slot() {
  --open_;
  limit_->release();
}

void UpstreamPool::shutdown() {
  shut_down_ = true;
  while (!idle_.empty()) {
    idle_.pop_front();
    close_connection_slot();
  }
  sync_idle_count();
  for (Waiter* w : waiters_) {
    w->timer.cancel();
  }
  waiters_.clear();
}

namespace {

// A pooled connection the server closed while idle reads as EOF; data arriving unasked
// means the previous exchange left bytes behind. Either way it must not be reused.
constexpr std::chrono::seconds kProbeAfterIdle{1};

bool looks_alive(UpstreamConnection& conn) {
  auto& sock = conn.lowest().socket();
  if (!sock.is_open()) {
    return false;
  }
  char byte;
  ssize_t n = ::recv(sock.native_handle(), &byte, 1, MSG_PEEK | MSG_DONTWAIT);
  return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
}

// A response head is read into the connection's flat_buffer; with room for a typical head
// (~300-700 bytes) in place, it arrives in one read instead of two.
template <class Stream>
std::unique_ptr<UpstreamConnection> make_connection(Stream stream) {
  auto conn = std::make_unique<UpstreamConnection>(std::move(stream));
  conn->buffer.reserve(4096);
  return conn;
}

}  // namespace

std::unique_ptr<UpstreamConnection> UpstreamPool::take_idle() {
  const auto now = std::chrono::steady_clock::now();
  while (!idle_.empty()) {
    std::unique_ptr<UpstreamConnection> conn = std::move(idle_.back());
    idle_.pop_back();
    sync_idle_count();
    const auto idle_for = now - conn->idle_since;
    // The liveness probe is a syscall per request; a connection used within the last second
    // is almost never closed by its server (keep-alive timeouts are seconds). When it was, the
    // request write fails and UpstreamCall::start retries once on a fresh connection.
    if (idle_for < endpoint_->pool.idle_timeout &&
        (idle_for < kProbeAfterIdle || looks_alive(*conn))) {
      return conn;
    }
    close_connection_slot();
  }
  return nullptr;
}

Awaitable<Result<std::unique_ptr<UpstreamConnection>>> UpstreamPool::acquire(
    std::chrono::milliseconds connect_timeout, bool fresh) {
  if (shut_down_) {
    co_return Error(ErrorKind::kUnavailable, "upstream pool is shutting down");
  }
  if (!fresh) {
    if (auto conn = take_idle()) {
      co_return std::move(conn);
    }
  }
  if (limit_->try_acquire()) {
    ++open_;
    co_return co_await connect(connect_timeout);
  }
  Waiter w(executor_);
  w.timer.expires_after(endpoint_->pool.acquire_timeout);
  waiters_.push_back(&w);
  if (waiters_.size() == 1) {
    limit_->wait_for_slot(shared_from_this());
  }
  co_await w.timer.async_wait(use_nothrow);
  if (w.conn) {
    if (!fresh) {
      co_return std::move(w.conn);
    }
    release(std::move(w.conn), false);  // hands the slot on; we open our own below
    if (!limit_->try_acquire()) {
      co_return Error(ErrorKind::kRateLimited,
                      "no upstream connection slot to provider '" + endpoint_->provider_id + "'")
          .with_code("upstream_pool_exhausted")
          .with_retry_after(1);
    }
    ++open_;
    co_return co_await connect(connect_timeout);
  }
  if (w.slot) {
    co_return co_await connect(connect_timeout);  // open_ and the limit already count it
  }
  std::erase(waiters_, &w);
  co_return Error(ErrorKind::kRateLimited,
                  "no upstream connection to provider '" + endpoint_->provider_id +
                      "' became free within " +
                      std::to_string(endpoint_->pool.acquire_timeout.count()) + " ms (" +
                      std::to_string(limit_->max()) + " connections in use)")
      .with_code("upstream_pool_exhausted")
      .with_retry_after(1);
}

void UpstreamPool::release(std::unique_ptr<UpstreamConnection> conn, bool reusable) {
  if (!conn) {
    return;
  }
  reusable = reusable && !shut_down_ && conn->buffer.size() == 0;
  if (reusable) {
    ++conn->uses;
    conn->idle_since = std::chrono::steady_clock::now();
  }
  if (!waiters_.empty()) {
    Waiter* w = waiters_.front();
    waiters_.pop_front();
    if (reusable) {
      w->conn = std::move(conn);
    } else {
      w->slot = true;  // the closing connection's slot passes to the waiter
    }
    w->timer.cancel();
    return;
  }
  if (reusable) {
    idle_.push_back(std::move(conn));
    sync_idle_count();
  } else {
    close_connection_slot();
  }
}

void UpstreamPool::post_slot_available() {
  net::post(executor_, [weak = weak_from_this()] {
    if (auto self = weak.lock()) {
      self->on_slot_available();
    }
  });
}

void UpstreamPool::on_slot_available() {
  while (!waiters_.empty() && limit_->try_acquire()) {
    Waiter* w = waiters_.front();
    waiters_.pop_front();
    ++open_;
    w->slot = true;
    w->timer.cancel();
  }
  if (!waiters_.empty()) {
    limit_->wait_for_slot(shared_from_this());
  }
}

void UpstreamPool::post_close_one_idle() {
  net::post(executor_, [weak = weak_from_this()] {
    auto self = weak.lock();
    if (!self || self->idle_.empty()) {
      return;
    }
    self->idle_.pop_front();  // the oldest
    self->sync_idle_count();
    self->close_connection_slot();
  });
}

Awaitable<Result<std::unique_ptr<UpstreamConnection>>> UpstreamPool::connect(
    std::chrono::milliseconds timeout) {
  const providers::Endpoint& ep = *endpoint_;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  auto fail = [this](Error e) {
    if (!waiters_.empty()) {
      // Our slot goes to the next waiter rather than back to the limit.
      Waiter* w = waiters_.front();
      waiters_.pop_front();
      w->slot = true;
      w->timer.cancel();
    } else {
      close_connection_slot();
    }
    return e;
  };

  auto [rec, results] = co_await resolve_with_deadline(executor_, ep.host, ep.port, deadline);
  if (rec) {
    co_return fail(
        Error(rec == net::error::operation_aborted ? ErrorKind::kUpstreamTimeout
                                                   : ErrorKind::kUpstreamUnreachable,
              "cannot resolve upstream host of provider '" + ep.provider_id + "': " + rec.message())
            .with_code("upstream_connect_failed"));
  }

  beast::tcp_stream tcp_stream(executor_);
  tcp_stream.expires_at(deadline);
  auto [cec, connected] = co_await tcp_stream.async_connect(results, use_nothrow);
  if (cec) {
    const bool timed_out = cec == beast::error::timeout;
    co_return fail(
        Error(timed_out ? ErrorKind::kUpstreamTimeout : ErrorKind::kUpstreamUnreachable,
              std::string(timed_out ? "timed out connecting" : "cannot connect") +
                  " to provider '" + ep.provider_id + "': " + cec.message())
            .with_code(timed_out ? "upstream_connect_timeout" : "upstream_connect_failed"));
  }
  tcp_stream.socket().set_option(tcp::no_delay(true));

  if (!ep.tls) {
    tcp_stream.expires_never();
    co_return make_connection(std::move(tcp_stream));
  }

  UpstreamConnection::TlsStream tls_stream(std::move(tcp_stream), *ep.ssl);
  boost::system::error_code addr_ec;
  net::ip::make_address(ep.server_name, addr_ec);
  // SNI is for DNS names only (RFC 6066 section 3); certificate verification covers both.
  if (addr_ec && !SSL_set_tlsext_host_name(tls_stream.native_handle(), ep.server_name.c_str())) {
    co_return fail(Error(ErrorKind::kInternal, "cannot set TLS server name"));
  }
  tls_stream.set_verify_callback(net::ssl::host_name_verification(ep.server_name));
  auto [hec] = co_await tls_stream.async_handshake(net::ssl::stream_base::client, use_nothrow);
  if (hec) {
    const bool timed_out = hec == beast::error::timeout;
    co_return fail(
        Error(timed_out ? ErrorKind::kUpstreamTimeout : ErrorKind::kUpstreamUnreachable,
              "TLS handshake with provider '" + ep.provider_id + "' failed: " + hec.message())
            .with_code(timed_out ? "upstream_connect_timeout" : "upstream_tls_failed"));
  }
  beast::get_lowest_layer(tls_stream).expires_never();
  co_return make_connection(std::move(tls_stream));
}

}  // namespace sluice::http
