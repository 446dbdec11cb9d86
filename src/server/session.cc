#include "server/session.h"

#include <chrono>
#include <random>

#include <boost/beast/http/read.hpp>
#include <sys/socket.h>

#include "codec/http_head.h"
#include "codec/request_head.h"
#include "codec/request_id.h"
#include "pipeline/pipeline.h"
#include "pipeline/snapshot.h"
#include "server/worker.h"
#include "spdlog/spdlog.h"

namespace sluice::server {
namespace net = http::net;
using http::use_nothrow;
using Clock = std::chrono::steady_clock;
using pipeline::RequestContext;

struct Session::WatchState {
  bool active = true;
  std::function<void()> on_gone;
};

namespace {

std::string_view sv(boost::beast::string_view s) { return {s.data(), s.size()}; }

bool iequals(std::string_view a, std::string_view b) {
  return boost::beast::iequals(boost::beast::string_view(a.data(), a.size()),
                               boost::beast::string_view(b.data(), b.size()));
}

// The caller's head as the pipeline sees it (codec::RequestHead over Beast's fields).
class HeadView final : public codec::RequestHead {
 public:
  explicit HeadView(const RequestHeader& head) : head_(head) {}

  std::string_view method() const override { return sv(head_.method_string()); }
  std::string_view target() const override { return sv(head_.target()); }
  // A linear scan by name: a head has a handful of fields, and Beast's find(string) first
  // hashes the name into its field table, which costs more than the scan (callgrind).
  std::string_view header(std::string_view name) const override {
    const auto* field = find(name);
    return field == nullptr ? std::string_view() : sv(field->value());
  }
  bool has_header(std::string_view name) const override { return find(name) != nullptr; }
  void for_each_header(FunctionRef<void(std::string_view, std::string_view)> visit) const override {
    for (const auto& field : head_) {
      visit(sv(field.name_string()), sv(field.value()));
    }
  }

 private:
  const RequestHeader::value_type* find(std::string_view name) const {
    for (const auto& field : head_) {
      const auto n = field.name_string();
      if (n.size() == name.size() && iequals(sv(n), name)) {
        return &field;
      }
    }
    return nullptr;
  }

  const RequestHeader& head_;
};

// 32 hex digits: the unix time in milliseconds (12 digits), then 80 random bits. Time first
// makes ids sort by creation, so the usage ledger's request_id index grows at its right edge
// instead of touching a random page per record (SqliteStore: about 7 us less per record).
std::string new_request_id() {
  // Per-thread generator: request ids need uniqueness, not secrecy.
  thread_local std::mt19937_64 rng{std::random_device{}()};
  static constexpr char kHex[] = "0123456789abcdef";
  std::string id(32, '0');
  const auto ms =
      static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                     std::chrono::system_clock::now().time_since_epoch())
                                     .count());
  for (int i = 0; i < 12; ++i) {
    id[11 - i] = kHex[(ms >> (4 * i)) & 0xF];
  }
  const std::uint64_t a = rng(), b = rng();
  for (int i = 0; i < 16; ++i) {
    id[12 + i] = kHex[(a >> (4 * i)) & 0xF];
  }
  for (int i = 0; i < 4; ++i) {
    id[28 + i] = kHex[(b >> (4 * i)) & 0xF];
  }
  return id;
}

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
  return Error(ErrorKind::kBadRequest, "malformed or incomplete HTTP request: " + ec.message())
      .with_code("bad_http_request");
}

Error framing_error(std::string message) {
  return Error(ErrorKind::kBadRequest, std::move(message)).with_code("ambiguous_framing");
}

// RFC 9112 section 6.3: a request whose body length is ambiguous is answered 400 and the
// connection closed, so no byte of it can be read as the start of another request (request
// smuggling through a proxy that frames it differently).
std::optional<Error> check_framing(const RequestHeader& head) {
  std::size_t lengths = 0;
  bool has_te = false;
  std::string codings;
  for (const auto& field : head) {
    const std::string_view name = sv(field.name_string());
    if (iequals(name, "content-length")) {
      ++lengths;
      for (char c : sv(field.value())) {
        if (c < '0' || c > '9') {
          return framing_error("Content-Length must be a single decimal number");
        }
      }
    } else if (iequals(name, "transfer-encoding")) {
      has_te = true;
      if (!codings.empty()) {
        codings.push_back(',');
      }
      codings.append(sv(field.value()));
    }
  }
  if (lengths > 1) {
    return framing_error("more than one Content-Length field");
  }
  if (!has_te) {
    return std::nullopt;
  }
  if (lengths > 0) {
    return framing_error("both Transfer-Encoding and Content-Length are present");
  }
  if (head.version() < 11) {
    return framing_error("Transfer-Encoding is not defined for HTTP/1.0");
  }
  // The final coding must be chunked, and chunked must appear exactly once.
  std::string_view rest = codings;
  std::string_view last;
  int chunked = 0;
  while (!rest.empty()) {
    const std::size_t comma = rest.find(',');
    std::string_view token = rest.substr(0, comma);
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    while (!token.empty() && (token.front() == ' ' || token.front() == '\t')) {
      token.remove_prefix(1);
    }
    while (!token.empty() && (token.back() == ' ' || token.back() == '\t')) {
      token.remove_suffix(1);
    }
    if (token.empty()) {
      continue;
    }
    last = token;
    chunked += iequals(token, "chunked") ? 1 : 0;
  }
  if (!iequals(last, "chunked") || chunked != 1) {
    return framing_error("Transfer-Encoding must end with chunked (exactly once)");
  }
  return std::nullopt;
}

}  // namespace

Session::Session(Worker& worker, http::tcp::socket socket)
    : worker_(worker), pipeline_(worker.pipeline()), stream_(std::move(socket)) {
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

void Session::watch_disconnect(std::function<void()> on_gone) {
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
}

void Session::write_head(RequestContext& ctx, const pipeline::ResponseHead& head, bool chunked,
                         std::uint64_t content_length) {
  ctx.status = head.status;
  if (worker_.draining()) {
    keep_alive_ = false;
  }
  codec::HeadWriter writer(head_);
  // RFC 9112 section 6.1: no Transfer-Encoding towards HTTP/1.0; a stream ends at close.
  writer.status_line(http10_ && chunked ? 10 : 11, static_cast<unsigned>(head.status));
  writer.field("Content-Type", head.content_type);
  for (const auto& [name, value] : head.headers.view()) {
    writer.field(name, value);
  }
  if (!chunked) {
    writer.field("Content-Length", content_length);
  } else if (http10_) {
    keep_alive_ = false;
  } else {
    writer.field("Transfer-Encoding", "chunked");
  }
  if (!keep_alive_ && !(chunked && http10_)) {
    writer.field("Connection", "close");
  }
  writer.end();
}

void Session::arm_write_deadline(const RequestContext& ctx) {
  // A client that stops reading holds a write at most this long (slow-client guard).
  stream_.expires_after(ctx.snapshot->config().server.request_timeout);
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

http::Awaitable<bool> Session::send(RequestContext& ctx, const pipeline::ResponseHead& head,
                                    std::string_view body) {
  write_head(ctx, head, /*chunked=*/false, body.size());
  arm_write_deadline(ctx);
  const std::array<net::const_buffer, 2> buffers{net::buffer(head_),
                                                 net::buffer(body.data(), body.size())};
  auto [ec, n] = co_await net::async_write(stream_, buffers, use_nothrow);
  co_return wrote(ctx, ec, n);
}

http::Awaitable<bool> Session::begin_stream(RequestContext& ctx,
                                            const pipeline::ResponseHead& head) {
  write_head(ctx, head, /*chunked=*/true, 0);
  arm_write_deadline(ctx);
  auto [ec, n] = co_await net::async_write(stream_, net::buffer(head_), use_nothrow);
  co_return wrote(ctx, ec, n);
}

http::Awaitable<bool> Session::write(RequestContext& ctx, std::string_view data) {
  if (data.empty()) {
    co_return true;  // an empty chunk would terminate the body
  }
  arm_write_deadline(ctx);
  const net::const_buffer payload(data.data(), data.size());
  if (http10_) {
    auto [ec, n] = co_await net::async_write(stream_, payload, use_nothrow);
    co_return wrote(ctx, ec, n);
  }
  const std::size_t size_len = codec::format_chunk_size(chunk_size_, data.size());
  const std::array<net::const_buffer, 3> chunk{net::buffer(chunk_size_, size_len), payload,
                                               net::buffer("\r\n", 2)};
  auto [ec, n] = co_await net::async_write(stream_, chunk, use_nothrow);
  co_return wrote(ctx, ec, n);
}

http::Awaitable<bool> Session::end_stream(RequestContext& ctx) {
  if (http10_) {
    co_return true;  // the connection close ends the body
  }
  arm_write_deadline(ctx);
  auto [ec, n] = co_await net::async_write(stream_, net::buffer("0\r\n\r\n", 5), use_nothrow);
  co_return wrote(ctx, ec, n);
}

http::Awaitable<void> Session::linger_close() {
  // Closing a socket with unread bytes in its receive queue sends RST (RFC 1122 4.2.2.13),
  // and a client still sending its body would then lose the answer it has not read yet.
  // Half-close instead, and drain what arrives until the client closes, for a bounded time.
  static constexpr auto kLingerTotal = std::chrono::seconds(2);
  static constexpr auto kLingerQuiet = std::chrono::milliseconds(500);
  static constexpr std::size_t kLingerBytes = 64 * 1024 * 1024;
  boost::system::error_code ignored;
  stream_.socket().shutdown(net::socket_base::shutdown_send, ignored);
  const auto until = Clock::now() + kLingerTotal;
  std::size_t drained = 0;
  char sink[16 * 1024];
  while (drained < kLingerBytes && !client_gone_) {
    const auto now = Clock::now();
    if (now >= until) {
      break;
    }
    stream_.expires_after(std::min<Clock::duration>(kLingerQuiet, until - now));
    auto [ec, n] = co_await stream_.async_read_some(net::buffer(sink), use_nothrow);
    if (ec) {
      break;  // EOF (the client is done), timeout or reset
    }
    drained += n;
  }
  stream_.socket().close(ignored);
}

http::Awaitable<void> Session::run() {
  bool linger = false;
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
    // In flight from the request's first byte until this iteration ends, whichever way.
    struct InFlight {
      observability::Series& gauge;
      explicit InFlight(observability::Series& g) : gauge(g) { gauge.add_signed(1); }
      ~InFlight() { gauge.add_signed(-1); }
    } in_flight{worker_.requests_in_flight()};

    RequestContext ctx;
    pipeline_.begin(ctx);  // pins the snapshot: a reload from here on does not affect us
    const config::ServerSettings& settings = ctx.snapshot->config().server;
    http::FieldsArena fields_arena;  // outlives the parser and the request it holds
    bhttp::request_parser<bhttp::string_body, http::FieldsAllocator> parser(
        std::piecewise_construct, std::make_tuple(), std::make_tuple(fields_arena.allocator()));
    parser.header_limit(settings.max_header_bytes);
    parser.body_limit(settings.max_body_bytes);
    stream_.expires_never();
    std::optional<ReadDeadline> deadline;
    deadline.emplace(stream_.socket(), ctx.started + settings.request_timeout);
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
        // body_limit): answer in the endpoint's own protocol.
        pipeline_.on_request_line(ctx, sv(parser.get().method_string()), sv(parser.get().target()));
      }
      const Error err = read_error(hec, deadline->expired(), settings);
      deadline.reset();
      co_await pipeline_.reject(ctx, err, *this);
      pipeline_.end(ctx);
      linger = true;
      break;
    }
    const Request& head = parser.get();
    if (auto it = head.find("x-request-id");
        it != head.end() && codec::acceptable_request_id(sv(it->value()))) {
      ctx.request_id = std::string(sv(it->value()));
    } else {
      ctx.request_id = new_request_id();
    }
    keep_alive_ = head.keep_alive();
    http10_ = head.version() < 11;
    const HeadView view(head);

    // Cheap checks before reading (or inviting, with 100-continue) the body.
    std::optional<Error> early = check_framing(head);
    if (early) {
      pipeline_.on_request_line(ctx, view.method(), view.target());
    } else {
      early = pipeline_.on_head(ctx, view);
    }
    if (early) {
      keep_alive_ = false;  // the body is not read; the connection cannot be reused
      deadline.reset();
      co_await pipeline_.reject(ctx, *early, *this);
      pipeline_.end(ctx);
      linger = !parser.is_done();
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
        const Error err = read_error(bec, deadline->expired(), settings);
        deadline.reset();
        co_await pipeline_.reject(ctx, err, *this);
        pipeline_.end(ctx);
        linger = true;
        break;
      }
    }
    deadline.reset();
    const std::string& body = parser.get().body();
    ctx.bytes_in = body.size();
    co_await pipeline_.serve(ctx, view, body, *this);
    pipeline_.end(ctx);
    if (!keep_alive_ || client_gone_) {
      break;
    }
  }
  if (linger && !client_gone_) {
    co_await linger_close();
    co_return;
  }
  boost::system::error_code ignored;
  stream_.socket().shutdown(net::socket_base::shutdown_send, ignored);
  stream_.socket().close(ignored);
}

}  // namespace sluice::server
