#include "server.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <memory>
#include <optional>
#include <thread>
#include <vector>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/buffer.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/deferred.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/experimental/parallel_group.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/string.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/field.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <spdlog/spdlog.h>
#include <sys/socket.h>

#include "openai_errors.h"
#include "response_head.h"

namespace sluice::mock {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = asio::ssl;
using tcp = asio::ip::tcp;
using boost::system::error_code;

constexpr auto use_nothrow = asio::as_tuple(asio::use_awaitable);

constexpr std::uint64_t kBodyLimit = 64ull << 20;
constexpr std::uint32_t kHeaderLimit = 64 * 1024;
// Pipelined bytes the mock will buffer while a response is still going out; beyond this
// it stops reading (and so stops watching for EOF) until the response is done.
constexpr std::size_t kMaxPipelined = 1 << 20;
constexpr std::size_t kTlsReadChunk = 4096;
constexpr auto kTlsShutdownTimeout = std::chrono::seconds(1);

using PlainStream = tcp::socket;
using TlsStream = ssl::stream<tcp::socket>;

tcp::socket& socket_of(PlainStream& s) { return s; }
tcp::socket& socket_of(TlsStream& s) { return s.next_layer(); }

struct Worker {
  asio::io_context ctx{1};
  tcp::acceptor acceptor{ctx};
  const RequestHandler* handler = nullptr;
  Stats* stats = nullptr;
  ssl::context* tls = nullptr;
};

enum class WaitResult : std::uint8_t { kElapsed, kPeerClosed };

// Waits for `timer` while watching the socket, so that a peer that goes away during a
// latency, pace or stall wait is noticed at once rather than at the next write. Bytes the
// peer pipelines meanwhile are moved into `buffer` for the next request.
asio::awaitable<WaitResult> wait_watching(PlainStream& s, beast::flat_buffer& buffer,
                                          asio::steady_timer& timer) {
  for (;;) {
    if (buffer.size() >= kMaxPipelined) {
      co_await timer.async_wait(use_nothrow);
      co_return WaitResult::kElapsed;
    }
    auto [order, timer_ec, wait_ec] =
        co_await asio::experimental::make_parallel_group(
            timer.async_wait(asio::deferred), s.async_wait(tcp::socket::wait_read, asio::deferred))
            .async_wait(asio::experimental::wait_for_one(), asio::use_awaitable);
    if (order[0] == 0) {
      co_return WaitResult::kElapsed;
    }
    if (wait_ec) {
      co_return WaitResult::kPeerClosed;
    }
    // Readable means EOF, a reset, or pipelined bytes; a peek tells them apart without
    // consuming anything.
    char probe = 0;
    ssize_t n = ::recv(s.native_handle(), &probe, 1, MSG_PEEK | MSG_DONTWAIT);
    if (n == 0) {
      co_return WaitResult::kPeerClosed;
    }
    if (n < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) {
        continue;
      }
      co_return WaitResult::kPeerClosed;
    }
    error_code ec;
    std::size_t available = s.available(ec);
    if (ec) {
      co_return WaitResult::kPeerClosed;
    }
    std::size_t got = s.read_some(buffer.prepare(std::max<std::size_t>(available, 1)), ec);
    if (ec) {
      co_return WaitResult::kPeerClosed;
    }
    buffer.commit(got);
  }
}

// TLS: the raw socket cannot be peeked (a close_notify alert is data to TCP), so race a
// real read instead; decrypted bytes are kept for the next request.
asio::awaitable<WaitResult> wait_watching(TlsStream& s, beast::flat_buffer& buffer,
                                          asio::steady_timer& timer) {
  for (;;) {
    if (buffer.size() >= kMaxPipelined) {
      co_await timer.async_wait(use_nothrow);
      co_return WaitResult::kElapsed;
    }
    auto [order, timer_ec, read_ec, n] =
        co_await asio::experimental::make_parallel_group(
            timer.async_wait(asio::deferred),
            s.async_read_some(buffer.prepare(kTlsReadChunk), asio::deferred))
            .async_wait(asio::experimental::wait_for_one(), asio::use_awaitable);
    // The read may have completed in the same turn as the timer; never lose its bytes.
    if (!read_ec) {
      buffer.commit(n);
    }
    if (order[0] == 0) {
      co_return WaitResult::kElapsed;
    }
    if (read_ec) {
      co_return WaitResult::kPeerClosed;
    }
  }
}

template <class Stream>
asio::awaitable<WaitResult> wait_for(Stream& s, beast::flat_buffer& buffer,
                                     asio::steady_timer& timer, std::uint32_t ms) {
  timer.expires_after(std::chrono::milliseconds(ms));
  co_return co_await wait_watching(s, buffer, timer);
}

// Holds the connection open, sending nothing, until the peer closes it.
template <class Stream>
asio::awaitable<void> stall(Stream& s, beast::flat_buffer& buffer, asio::steady_timer& timer) {
  for (;;) {
    timer.expires_at(asio::steady_timer::time_point::max());
    WaitResult r = co_await wait_watching(s, buffer, timer);
    if (r == WaitResult::kPeerClosed) {
      co_return;
    }
  }
}

template <class Stream>
void hard_close(Stream& s, DisconnectMode mode) {
  auto& sock = socket_of(s);
  error_code ec;
  if (mode == DisconnectMode::kReset) {
    sock.set_option(tcp::socket::linger(true, 0), ec);
  } else {
    sock.shutdown(tcp::socket::shutdown_both, ec);
  }
  sock.close(ec);
}

asio::awaitable<void> graceful_close(PlainStream& s) {
  error_code ec;
  s.shutdown(tcp::socket::shutdown_send, ec);
  s.close(ec);
  co_return;
}

asio::awaitable<void> graceful_close(TlsStream& s) {
  asio::steady_timer timer(s.get_executor());
  timer.expires_after(kTlsShutdownTimeout);
  co_await asio::experimental::make_parallel_group(timer.async_wait(asio::deferred),
                                                   s.async_shutdown(asio::deferred))
      .async_wait(asio::experimental::wait_for_one(), asio::use_awaitable);
  error_code ec;
  s.next_layer().close(ec);
}

class Gauge {
 public:
  explicit Gauge(std::atomic<std::int64_t>& g) : g_(g) {
    g_.fetch_add(1, std::memory_order_relaxed);
  }
  ~Gauge() { g_.fetch_sub(1, std::memory_order_relaxed); }
  Gauge(const Gauge&) = delete;
  Gauge& operator=(const Gauge&) = delete;

 private:
  std::atomic<std::int64_t>& g_;
};

void bump(std::atomic<std::uint64_t>& c) { c.fetch_add(1, std::memory_order_relaxed); }

// Per-connection state reused across requests: one read buffer (pipelining-safe), one
// output buffer, one event buffer and one timer.
template <class Stream>
struct Connection {
  Stream& stream;
  Worker& worker;
  beast::flat_buffer buffer;
  std::string out;
  std::string event;
  asio::steady_timer timer;
  // Views into the current parser's message; the header vector's capacity is reused.
  MockRequest request;

  Connection(Stream& s, Worker& w) : stream(s), worker(w), timer(s.get_executor()) {}

  asio::awaitable<bool> write_out() {
    auto [ec, n] = co_await asio::async_write(stream, asio::buffer(out), use_nothrow);
    co_return !ec;
  }

  // Sends one reply, applying its timing faults. Returns false when the connection must not
  // be used again: the peer is gone, or the mock cut or stalled it.
  asio::awaitable<bool> send(Reply& reply, bool keep_alive) {
    Stats& stats = *worker.stats;
    const Faults& f = reply.faults;
    const bool is_stream = reply.stream != nullptr;
    std::optional<Gauge> stream_gauge;
    if (is_stream) {
      stream_gauge.emplace(stats.active_streams);
    }
    auto& aborted = is_stream ? stats.streams_aborted : stats.requests_aborted;

    // Interim heads go out at once, before any latency, as a server that acknowledges a
    // request early and answers later would send them.
    if (!f.informational.empty()) {
      out.clear();
      for (int status : f.informational) {
        append_interim_head(out, status);
      }
      bool interim_sent = co_await write_out();
      if (!interim_sent) {
        bump(aborted);
        co_return false;
      }
    }

    // For a non-stream reply the first byte is the head, so first-byte-ms adds to latency.
    std::uint64_t before_head = f.latency_ms + (is_stream ? 0u : f.first_byte_ms);
    if (before_head > 0) {
      WaitResult r =
          co_await wait_for(stream, buffer, timer, static_cast<std::uint32_t>(before_head));
      if (r == WaitResult::kPeerClosed) {
        bump(aborted);
        co_return false;
      }
    }

    ResponseHead head;
    head.status = reply.status;
    head.content_type = reply.content_type;
    head.request_number = reply.request_number;
    head.keep_alive = keep_alive;
    head.extra_headers = reply.extra_headers;

    if (!is_stream) {
      if (f.stall_after) {
        co_await stall(stream, buffer, timer);
        bump(aborted);
        co_return false;
      }
      if (f.disconnect_after) {
        hard_close(stream, f.disconnect_mode);
        co_return false;
      }
      head.content_length = reply.body.size();
      out.clear();
      append_response_head(out, head);
      out += reply.body;
      out += reply.trailing;
      bool sent = co_await write_out();
      if (!sent) {
        bump(aborted);
        co_return false;
      }
      count_trailing(reply);
      co_return true;
    }

    head.chunked = true;
    out.clear();
    append_response_head(out, head);
    bool head_sent = co_await write_out();
    if (!head_sent) {
      bump(aborted);
      co_return false;
    }
    std::uint32_t counted = 0;
    bool first = true;
    for (;;) {
      event.clear();
      EventKind kind = EventKind::kTrailer;
      bool has = reply.stream->next(event, kind);
      if (!has || kind != EventKind::kPrelude) {
        if (f.stall_after && counted == *f.stall_after) {
          co_await stall(stream, buffer, timer);
          bump(aborted);
          co_return false;
        }
        if (f.disconnect_after && counted == *f.disconnect_after) {
          hard_close(stream, f.disconnect_mode);
          bump(stats.streams_disconnected);
          co_return false;
        }
      }
      if (!has) {
        break;
      }
      std::uint32_t delay = first ? f.first_byte_ms : f.pace_ms;
      first = false;
      if (delay > 0) {
        WaitResult r = co_await wait_for(stream, buffer, timer, delay);
        if (r == WaitResult::kPeerClosed) {
          bump(aborted);
          co_return false;
        }
      }
      out.clear();
      append_chunk(out, event);
      bool event_sent = co_await write_out();
      if (!event_sent) {
        bump(aborted);
        co_return false;
      }
      if (kind == EventKind::kCounted) {
        ++counted;
      }
    }
    if (f.end_delay_ms > 0) {
      WaitResult r = co_await wait_for(stream, buffer, timer, f.end_delay_ms);
      if (r == WaitResult::kPeerClosed) {
        bump(aborted);
        co_return false;
      }
    }
    out.assign(kLastChunk);
    out += reply.trailing;
    bool end_sent = co_await write_out();
    if (!end_sent) {
      bump(aborted);
      co_return false;
    }
    bump(stats.streams_completed);
    count_trailing(reply);
    co_return true;
  }

  void count_trailing(const Reply& reply) {
    if (!reply.trailing.empty()) {
      bump(worker.stats->trailing_responses_sent);
    }
  }

  // Answers a request the mock could not parse, then the connection closes.
  asio::awaitable<void> send_protocol_error(int status, std::string_view message) {
    std::string body = openai_error_body(message, "invalid_request_error", {}, {});
    ResponseHead head;
    head.status = status;
    head.content_type = "application/json";
    head.keep_alive = false;
    head.content_length = body.size();
    out.clear();
    append_response_head(out, head);
    out += body;
    co_await write_out();
  }

  asio::awaitable<void> run() {
    for (;;) {
      // A fresh parser per message; the buffer carries pipelined bytes across messages.
      http::request_parser<http::string_body> parser;
      parser.body_limit(kBodyLimit);
      parser.header_limit(kHeaderLimit);
      auto [ec, n] = co_await http::async_read_header(stream, buffer, parser, use_nothrow);
      if (!ec && !parser.is_done()) {
        auto expect = parser.get()[http::field::expect];
        if (beast::iequals(expect, "100-continue")) {
          out.assign("HTTP/1.1 100 Continue\r\n\r\n");
          bool continue_sent = co_await write_out();
          if (!continue_sent) {
            co_return;
          }
        }
        std::tie(ec, n) = co_await http::async_read(stream, buffer, parser, use_nothrow);
      }
      if (ec) {
        if (ec == http::error::header_limit) {
          co_await send_protocol_error(431, "Request header fields too large.");
        } else if (ec == http::error::body_limit) {
          co_await send_protocol_error(413, "Request body too large (mock limit 64 MiB).");
        } else if (ec.category() == http::make_error_code(http::error::bad_target).category() &&
                   ec != http::error::end_of_stream && ec != http::error::partial_message) {
          co_await send_protocol_error(400, "Malformed HTTP request: " + ec.message());
        }
        co_return;
      }

      auto& msg = parser.get();
      request.method = msg.method_string();
      request.target = msg.target();
      request.body = msg.body();
      request.headers.clear();
      for (const auto& field : msg) {
        request.headers.emplace_back(field.name_string(), field.value());
      }
      const bool keep_alive = msg.keep_alive();
      Reply reply = worker.handler->handle(request);
      bool reusable = co_await send(reply, keep_alive);
      if (!reusable) {
        co_return;
      }
      if (!keep_alive) {
        co_await graceful_close(stream);
        co_return;
      }
    }
  }
};

asio::awaitable<void> run_connection(tcp::socket socket, Worker& worker) {
  Gauge active(worker.stats->connections_active);
  if (worker.tls) {
    TlsStream stream(std::move(socket), *worker.tls);
    auto [ec] = co_await stream.async_handshake(ssl::stream_base::server, use_nothrow);
    if (ec) {
      co_return;
    }
    Connection<TlsStream> conn(stream, worker);
    co_await conn.run();
  } else {
    PlainStream stream(std::move(socket));
    Connection<PlainStream> conn(stream, worker);
    co_await conn.run();
  }
}

asio::awaitable<void> accept_loop(Worker& worker) {
  asio::steady_timer backoff(worker.ctx);
  for (;;) {
    auto [ec, socket] = co_await worker.acceptor.async_accept(use_nothrow);
    if (ec == asio::error::operation_aborted) {
      co_return;
    }
    if (ec) {
      // Out of descriptors or similar: back off instead of spinning on the error.
      spdlog::warn("accept failed: {}", ec.message());
      backoff.expires_after(std::chrono::milliseconds(50));
      co_await backoff.async_wait(use_nothrow);
      continue;
    }
    error_code opt_ec;
    socket.set_option(tcp::no_delay(true), opt_ec);
    bump(worker.stats->connections_accepted);
    Stats* stats = worker.stats;
    asio::co_spawn(worker.ctx, run_connection(std::move(socket), worker),
                   [stats](std::exception_ptr e) {
                     if (!e) {
                       return;
                     }
                     bump(stats->internal_errors);
                     try {
                       std::rethrow_exception(e);
                     } catch (const std::exception& ex) {
                       spdlog::error("connection failed: {}", ex.what());
                     } catch (...) {
                       spdlog::error("connection failed: unknown exception");
                     }
                   });
  }
}

void open_acceptor(tcp::acceptor& acceptor, const tcp::endpoint& endpoint, bool share_port) {
  using reuse_port = asio::detail::socket_option::boolean<SOL_SOCKET, SO_REUSEPORT>;
  acceptor.open(endpoint.protocol());
  acceptor.set_option(tcp::acceptor::reuse_address(true));
  if (share_port) {
    acceptor.set_option(reuse_port(true));
  }
  acceptor.bind(endpoint);
  acceptor.listen(asio::socket_base::max_listen_connections);
}

// SO_REUSEPORT would let the workers join another process's listener (same user) on a busy
// port, or let bind(0) pick such a port. Bind a probe without it first: it fails on a busy
// port and otherwise yields a port nobody holds, which the workers then share.
std::uint16_t reserve_port(const tcp::endpoint& endpoint, asio::io_context& ctx) {
  tcp::acceptor probe(ctx);
  probe.open(endpoint.protocol());
  probe.set_option(tcp::acceptor::reuse_address(true));
  probe.bind(endpoint);
  return probe.local_endpoint().port();
}

}  // namespace

int run_server(const ServerOptions& options, const RequestHandler& handler, Stats& stats) {
  std::signal(SIGPIPE, SIG_IGN);

  std::optional<ssl::context> tls;
  if (!options.tls_cert.empty() || !options.tls_key.empty()) {
    tls.emplace(ssl::context::tls_server);
    tls->set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 |
                     ssl::context::no_sslv3 | ssl::context::single_dh_use);
    tls->use_certificate_chain_file(options.tls_cert);
    tls->use_private_key_file(options.tls_key, ssl::context::pem);
  }

  const auto address = asio::ip::make_address(options.host);
  const unsigned threads = std::max(1u, options.threads);
  std::vector<std::unique_ptr<Worker>> workers;
  std::uint16_t port = options.port;
  for (unsigned i = 0; i < threads; ++i) {
    auto w = std::make_unique<Worker>();
    w->handler = &handler;
    w->stats = &stats;
    w->tls = tls ? &*tls : nullptr;
    if (i == 0 && threads > 1) {
      port = reserve_port(tcp::endpoint(address, port), w->ctx);
    }
    open_acceptor(w->acceptor, tcp::endpoint(address, port), threads > 1);
    port = w->acceptor.local_endpoint().port();
    workers.push_back(std::move(w));
  }

  std::printf("{\"event\":\"listening\",\"port\":%u,\"tls\":%s}\n", static_cast<unsigned>(port),
              tls ? "true" : "false");
  std::fflush(stdout);

  asio::signal_set signals(workers[0]->ctx, SIGINT, SIGTERM);
  signals.async_wait([&workers](const error_code& ec, int) {
    if (ec) {
      return;
    }
    for (auto& w : workers) {
      w->ctx.stop();
    }
  });

  for (auto& w : workers) {
    asio::co_spawn(w->ctx, accept_loop(*w), asio::detached);
  }
  std::vector<std::thread> pool;
  for (std::size_t i = 1; i < workers.size(); ++i) {
    pool.emplace_back([ctx = &workers[i]->ctx] { ctx->run(); });
  }
  workers[0]->ctx.run();
  for (auto& t : pool) {
    t.join();
  }
  return 0;
}

}  // namespace sluice::mock
