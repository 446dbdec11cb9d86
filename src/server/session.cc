#include "server/session.h"

#include <random>

#include <boost/beast/http/read.hpp>
#include <sys/socket.h>

#include "core/version.h"
#include "http/head_writer.h"
#include "protocol/anthropic/errors.h"
#include "protocol/openai_chat/errors.h"
#include "server/handlers.h"
#include "server/worker.h"
#include "spdlog/spdlog.h"

namespace sluice::server {
namespace net = http::net;
using http::use_nothrow;
using Clock = std::chrono::steady_clock;

struct Session::WatchState {
  bool active = true;
  std::function<void()> on_gone;
};

namespace {

std::string new_request_id() {
  // Per-thread generator: request ids need uniqueness, not secrecy.
  thread_local std::mt19937_64 rng{std::random_device{}()};
  static constexpr char kHex[] = "0123456789abcdef";
  std::string id(32, '0');
  std::uint64_t a = rng(), b = rng();
  for (int i = 0; i < 16; ++i) {
    id[i] = kHex[(a >> (4 * i)) & 0xF];
    id[16 + i] = kHex[(b >> (4 * i)) & 0xF];
  }
  return id;
}

// A caller-supplied id is kept when it is short and printable, so it can be correlated
// across systems; anything else is replaced.
bool acceptable_request_id(std::string_view id) {
  if (id.empty() || id.size() > 128) {
    return false;
  }
  for (unsigned char c : id) {
    if (c <= 0x20 || c >= 0x7f || c == '"' || c == '\\') {
      return false;
    }
  }
  return true;
}

std::string_view sv(boost::beast::string_view s) { return {s.data(), s.size()}; }

// Read deadline that cancels the socket instead of closing it (as tcp_stream's own timer
// would), so a slow client can still be told 408 before the connection closes.
class ReadDeadline {
 public:
  ReadDeadline(http::tcp::socket& socket, Clock::time_point deadline)
      : state_(std::make_shared<State>()), timer_(socket.get_executor()) {
    state_->socket = &socket;
    timer_.expires_at(deadline);
    timer_.async_wait([state = state_](boost::system::error_code ec) {
      if (!ec && state->active) {
        state->expired = true;
        boost::system::error_code ignored;
        state->socket->cancel(ignored);
      }
    });
  }
  ~ReadDeadline() {
    state_->active = false;
    timer_.cancel();
  }
  bool expired() const { return state_->expired; }

 private:
  struct State {
    http::tcp::socket* socket = nullptr;
    bool active = true;
    bool expired = false;
  };
  std::shared_ptr<State> state_;
  net::steady_timer timer_;
};

// What to tell a client whose request head or body could not be read.
Error read_error(const boost::system::error_code& ec, bool timed_out,
                 const config::ServerSettings& settings) {
  if (timed_out) {
    return Error(ErrorKind::kRequestTimeout, "the request was not received within " +
                                                 std::to_string(settings.request_timeout.count()) +
                                                 " ms");
  }
  if (ec == bhttp::error::body_limit) {
    // Also raised while reading the head, when Content-Length is over the limit.
    return Error(ErrorKind::kPayloadTooLarge,
                 "request body exceeds " + std::to_string(settings.max_body_bytes) + " bytes")
        .with_code("request_too_large");
  }
  if (ec == bhttp::error::header_limit) {
    return Error(ErrorKind::kHeadersTooLarge,
                 "request headers exceed " + std::to_string(settings.max_header_bytes) + " bytes");
  }
  return Error(ErrorKind::kBadRequest, "malformed or incomplete HTTP request: " + ec.message());
}

}  // namespace

Session::Session(Worker& worker, http::tcp::socket socket)
    : worker_(worker), stream_(std::move(socket)) {
  registration_ = worker_.add_session(this);
}

Session::~Session() {
  unwatch();
  worker_.remove_session(registration_);
}

void Session::close_if_idle() {
  if (idle_) {
    boost::system::error_code ignored;
    stream_.socket().cancel(ignored);
  }
}

void Session::force_close() {
  if (watch_ && watch_->active) {
    client_gone_ = true;
    watch_->active = false;
    if (watch_->on_gone) {
      watch_->on_gone();
    }
  }
  boost::system::error_code ignored;
  stream_.socket().shutdown(net::socket_base::shutdown_both, ignored);
  stream_.socket().close(ignored);
}

Session::Watch::~Watch() { session_->unwatch(); }

void Session::unwatch() {
  if (watch_) {
    if (watch_->active) {
      watch_->active = false;
      boost::system::error_code ignored;
      stream_.socket().cancel(ignored);  // no other operation is pending while watching
    }
    watch_.reset();
  }
}

Session::Watch Session::watch_disconnect(std::function<void()> on_gone) {
  unwatch();
  auto state = std::make_shared<WatchState>();
  state->on_gone = std::move(on_gone);
  watch_ = state;
  const int fd = stream_.socket().native_handle();
  stream_.socket().async_wait(
      net::socket_base::wait_read, [this, state, fd](boost::system::error_code ec) {
        if (!state->active) {
          return;  // unwatched; the session may be gone, touch nothing
        }
        state->active = false;
        if (!ec) {
          char byte;
          ssize_t n = ::recv(fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
          if (n > 0 || (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))) {
            return;  // a pipelined request: the client is alive
          }
        }
        client_gone_ = true;
        state->on_gone();
      });
  return Watch(this);
}

void Session::standard_fields(RequestContext& ctx, http::HeadWriter& head, unsigned status) {
  ctx.status = static_cast<int>(status);
  head.field("x-request-id", ctx.request_id);
  if (!ctx.provider.empty()) {
    head.field("x-sluice-provider", ctx.provider);
    head.field("x-sluice-model", ctx.model);
    head.field("x-sluice-attempts", static_cast<std::uint64_t>(ctx.attempts));
  }
  head.field("Server", "sluice");
  if (worker_.draining()) {
    keep_alive_ = false;
  }
}

void Session::arm_write_deadline() {
  // A client that stops reading holds a write at most this long (slow-client guard).
  stream_.expires_after(worker_.snapshot().config().server.request_timeout);
}

bool Session::wrote(RequestContext& ctx, const boost::system::error_code& ec, std::size_t n) {
  ctx.bytes_out += n;
  if (ec) {
    client_gone_ = true;
    keep_alive_ = false;
    return false;
  }
  return true;
}

http::Awaitable<bool> Session::send(RequestContext& ctx, Response& res) {
  const unsigned status = res.result_int();
  http::HeadWriter head(head_);
  head.status_line(11, status).fields(res.base());
  standard_fields(ctx, head, status);
  head.field("Content-Length", static_cast<std::uint64_t>(res.body().size()));
  if (!keep_alive_) {
    head.field("Connection", "close");
  }
  head.end();
  arm_write_deadline();
  const std::array<net::const_buffer, 2> buffers{net::buffer(head_), net::buffer(res.body())};
  auto [ec, n] = co_await net::async_write(stream_, buffers, use_nothrow);
  co_return wrote(ctx, ec, n);
}

http::Awaitable<bool> Session::send_error(RequestContext& ctx, const Error& error) {
  ctx.error = error;
  Response res{static_cast<bhttp::status>(error.http_status()), 11};
  res.set(bhttp::field::content_type, "application/json");
  if (error.retry_after_seconds() > 0) {
    res.set(bhttp::field::retry_after, std::to_string(error.retry_after_seconds()));
  }
  res.body() = ctx.dialect == Dialect::kAnthropic ? protocol::anthropic::encode_error(error)
                                                  : protocol::openai_chat::encode_error(error);
  co_return co_await send(ctx, res);
}

http::Awaitable<bool> Session::send_stream_head(RequestContext& ctx,
                                                bhttp::response<bhttp::empty_body>& res) {
  const unsigned status = res.result_int();
  http::HeadWriter head(head_);
  // RFC 9112 section 6.1: no Transfer-Encoding towards HTTP/1.0; the body ends at close.
  head.status_line(http10_ ? 10 : 11, status).fields(res.base());
  standard_fields(ctx, head, status);
  if (http10_) {
    keep_alive_ = false;
  } else {
    head.field("Transfer-Encoding", "chunked");
    if (!keep_alive_) {
      head.field("Connection", "close");
    }
  }
  head.end();
  arm_write_deadline();
  auto [ec, n] = co_await net::async_write(stream_, net::buffer(head_), use_nothrow);
  co_return wrote(ctx, ec, n);
}

http::Awaitable<bool> Session::send_chunk(RequestContext& ctx, std::string_view data) {
  if (data.empty()) {
    co_return true;  // an empty chunk would terminate the body
  }
  arm_write_deadline();
  const net::const_buffer payload(data.data(), data.size());
  if (http10_) {
    auto [ec, n] = co_await net::async_write(stream_, payload, use_nothrow);
    co_return wrote(ctx, ec, n);
  }
  const std::size_t size_len = http::format_chunk_size(chunk_size_, data.size());
  const std::array<net::const_buffer, 3> chunk{net::buffer(chunk_size_, size_len), payload,
                                               net::buffer("\r\n", 2)};
  auto [ec, n] = co_await net::async_write(stream_, chunk, use_nothrow);
  co_return wrote(ctx, ec, n);
}

http::Awaitable<bool> Session::send_last_chunk(RequestContext& ctx) {
  if (http10_) {
    co_return true;  // the connection close ends the body
  }
  arm_write_deadline();
  auto [ec, n] = co_await net::async_write(stream_, net::buffer("0\r\n\r\n", 5), use_nothrow);
  co_return wrote(ctx, ec, n);
}

http::Awaitable<void> Session::run() {
  for (;;) {
    if (worker_.draining()) {
      break;
    }
    // Keep-alive idle period: wait for the first byte of the next request.
    if (buffer_.size() == 0) {
      idle_ = true;
      stream_.expires_after(worker_.snapshot().config().server.idle_timeout);
      auto [ec, n] = co_await stream_.async_read_some(buffer_.prepare(4096), use_nothrow);
      buffer_.commit(n);
      idle_ = false;
      if (ec || worker_.draining()) {
        break;  // closed, idle timeout, or drain: close silently
      }
    }
    idle_ = false;

    RequestContext ctx;
    const auto& server_settings = worker_.snapshot().config().server;
    http::FieldsArena fields_arena;  // outlives the parser and the request it holds
    bhttp::request_parser<bhttp::string_body, http::FieldsAllocator> parser(
        std::piecewise_construct, std::make_tuple(), std::make_tuple(fields_arena.allocator()));
    parser.header_limit(server_settings.max_header_bytes);
    parser.body_limit(server_settings.max_body_bytes);
    stream_.expires_never();
    std::optional<ReadDeadline> deadline;
    deadline.emplace(stream_.socket(), ctx.started + server_settings.request_timeout);
    auto [hec, hn] = co_await bhttp::async_read_header(stream_, buffer_, parser, use_nothrow);
    if (hec == bhttp::error::end_of_stream) {
      break;
    }
    if (hec) {
      ctx.request_id = new_request_id();
      keep_alive_ = false;
      if (hec == net::error::operation_aborted && !deadline->expired()) {
        break;  // drain or shutdown cancelled the read
      }
      if (!parser.get().target().empty()) {
        // The request line parsed but the head was refused (e.g. a Content-Length over
        // body_limit): answer in the endpoint's own error shape.
        ctx.method = std::string(sv(parser.get().method_string()));
        ctx.path = std::string(sv(parser.get().target()));
        ctx.dialect = dialect_for_target(ctx.path);
      }
      Error err = read_error(hec, deadline->expired(), server_settings);
      deadline.reset();
      co_await send_error(ctx, err);
      worker_.shared().access_log->write(worker_.index(), format_access_log(ctx));
      break;
    }
    auto& head = parser.get();
    ctx.method = std::string(sv(head.method_string()));
    ctx.path = std::string(sv(head.target()));
    if (auto it = head.find("x-request-id");
        it != head.end() && acceptable_request_id(sv(it->value()))) {
      ctx.request_id = std::string(sv(it->value()));
    } else {
      ctx.request_id = new_request_id();
    }
    keep_alive_ = head.keep_alive();
    http10_ = head.version() < 11;

    // Cheap checks before reading (or inviting, with 100-continue) the body.
    if (auto early = check_before_body(*this, ctx, head)) {
      keep_alive_ = false;  // the body is not read; the connection cannot be reused
      deadline.reset();
      co_await send_error(ctx, *early);
      worker_.shared().access_log->write(worker_.index(), format_access_log(ctx));
      break;
    }
    if (!parser.is_done()) {
      if (auto it = head.find(bhttp::field::expect);
          it != head.end() && boost::beast::iequals(it->value(), "100-continue")) {
        static constexpr std::string_view kContinue = "HTTP/1.1 100 Continue\r\n\r\n";
        auto [cec, cn] = co_await net::async_write(
            stream_, net::const_buffer(kContinue.data(), kContinue.size()), use_nothrow);
        if (cec) {
          break;
        }
      }
      auto [bec, bn] = co_await bhttp::async_read(stream_, buffer_, parser, use_nothrow);
      if (bec) {
        keep_alive_ = false;
        if (bec == net::error::operation_aborted && !deadline->expired()) {
          break;
        }
        Error err = read_error(bec, deadline->expired(), server_settings);
        deadline.reset();
        co_await send_error(ctx, err);
        worker_.shared().access_log->write(worker_.index(), format_access_log(ctx));
        break;
      }
    }
    deadline.reset();
    Request req = parser.release();
    ctx.bytes_in = req.body().size();
    co_await handle(ctx, req);
    worker_.shared().access_log->write(worker_.index(), format_access_log(ctx));
    if (!keep_alive_ || client_gone_) {
      break;
    }
  }
  boost::system::error_code ignored;
  stream_.socket().shutdown(net::socket_base::shutdown_send, ignored);
  stream_.socket().close(ignored);
}

http::Awaitable<void> Session::handle(RequestContext& ctx, Request& req) {
  co_await dispatch(*this, ctx, req);
}

}  // namespace sluice::server
