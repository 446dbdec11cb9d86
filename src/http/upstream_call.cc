#include "http/upstream_call.h"

#include <boost/beast/http/read.hpp>

namespace sluice::http {
namespace bhttp = beast::http;
using Clock = std::chrono::steady_clock;

namespace {

// More interim (1xx) heads than any real server sends before its answer.
constexpr int kMaxInterimResponses = 8;

bool is_stale_connection_error(const boost::system::error_code& ec) {
  return ec == bhttp::error::end_of_stream || ec == net::error::eof ||
         ec == net::error::connection_reset || ec == net::error::broken_pipe ||
         ec == net::error::connection_aborted;
}

}  // namespace

UpstreamCall::UpstreamCall(std::shared_ptr<UpstreamPool> pool,
                           std::unique_ptr<UpstreamConnection> conn)
    : pool_(std::move(pool)), conn_(std::move(conn)), provider_id_(pool_->endpoint().provider_id) {
  new_parser();
}

void UpstreamCall::new_parser() {
  parser_.emplace(std::piecewise_construct, std::make_tuple(),
                  std::make_tuple(fields_arena_.allocator()));
  parser_->body_limit(std::numeric_limits<std::uint64_t>::max());
  parser_->header_limit(64 * 1024);
}

UpstreamCall::~UpstreamCall() {
  if (conn_) {
    const bool reusable =
        !aborted_ && !failed_ && parser_->is_done() && parser_->get().keep_alive();
    pool_->release(std::move(conn_), reusable);
  }
}

std::string_view UpstreamCall::header(std::string_view name) const {
  auto it = parser_->get().find(name);
  if (it == parser_->get().end()) {
    return {};
  }
  return {it->value().data(), it->value().size()};
}

void UpstreamCall::for_each_header(
    FunctionRef<void(std::string_view, std::string_view)> visit) const {
  for (const auto& f : parser_->get()) {
    visit(std::string_view(f.name_string().data(), f.name_string().size()),
          std::string_view(f.value().data(), f.value().size()));
  }
}

void UpstreamCall::abort() {
  aborted_ = true;
  if (conn_) {
    boost::system::error_code ignored;
    conn_->lowest().socket().close(ignored);
  }
}

Awaitable<boost::system::error_code> UpstreamCall::send_and_read_head(
    UpstreamRequestBytes request, const config::Timeouts& timeouts, Phase& phase) {
  // The body is referenced, not copied: a large prompt is written straight from the
  // caller's buffer.
  const std::array<net::const_buffer, 2> buffers{net::buffer(request.head),
                                                 net::buffer(request.body)};
  phase = Phase::kWrite;
  conn_->lowest().expires_at(total_deadline_);
  auto [wec, written] = co_await std::visit(
      [&](auto& s) { return net::async_write(s, buffers, use_nothrow); }, conn_->stream);
  if (wec) {
    co_return wec;
  }
  phase = Phase::kReadHead;
  const auto sent_at = Clock::now();
  conn_->lowest().expires_at(std::min(total_deadline_, sent_at + timeouts.first_byte));
  for (int interim = 0;; ++interim) {
    auto [rec, read] = co_await std::visit(
        [&](auto& s) { return bhttp::async_read_header(s, conn_->buffer, *parser_, use_nothrow); },
        conn_->stream);
    if (rec) {
      co_return rec;
    }
    const int status = parser_->get().result_int();
    if (status >= 200) {
      break;
    }
    // RFC 9110 section 15.2: a client must accept interim responses before the final one
    // (100 Continue, 103 Early Hints) and ignore them. Relaying one as the answer would leave
    // the real answer on the pooled connection for the next caller. 101 means the server
    // switched protocols, which this client never asks for.
    if (status == 101 || interim + 1 >= kMaxInterimResponses) {
      co_return make_error_code(bhttp::error::bad_status);
    }
    new_parser();
  }
  timings_.first_byte =
      std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - sent_at);
  co_return boost::system::error_code{};
}

namespace {

// Why start() failed, once the request could not be exchanged. Built here rather than in the
// coroutine: error temporaries in a coroutine body all live in its frame, and a frame over
// 1020 bytes is never recycled by Asio (one malloc per request).
Error start_error(const std::string& provider, const boost::system::error_code& ec, bool wrote,
                  bool total_passed, const config::Timeouts& timeouts) {
  if (ec == beast::error::timeout) {
    return Error(ErrorKind::kUpstreamTimeout,
                 "provider '" + provider + "' sent no response within " +
                     std::to_string(total_passed ? timeouts.total.count()
                                                 : timeouts.first_byte.count()) +
                     " ms")
        .with_code(total_passed ? "upstream_total_timeout" : "upstream_first_byte_timeout");
  }
  if (wrote && is_stale_connection_error(ec)) {
    return Error(ErrorKind::kUpstreamProtocol,
                 "provider '" + provider + "' closed the connection after the request was sent (" +
                     ec.message() +
                     "); it was not re-sent, because the provider may have processed it")
        .with_code("upstream_reset_after_send");
  }
  if (wrote) {
    return Error(ErrorKind::kUpstreamProtocol,
                 "provider '" + provider + "' sent an invalid response head: " + ec.message())
        .with_code("upstream_bad_response");
  }
  return Error(ErrorKind::kUpstreamUnreachable,
               "request to provider '" + provider + "' failed: " + ec.message())
      .with_code("upstream_connection_failed");
}

Error client_gone_error() { return Error(ErrorKind::kClientGone, "client disconnected"); }

}  // namespace

Awaitable<Result<std::unique_ptr<UpstreamCall>>> UpstreamCall::start(
    std::shared_ptr<UpstreamPool> pool, UpstreamRequestBytes request,
    const config::Timeouts& timeouts, providers::Cancellation& cancel) {
  const auto started = Clock::now();
  const auto total_deadline = started + timeouts.total;
  for (int attempt = 0; attempt < 2; ++attempt) {
    auto remaining =
        std::chrono::duration_cast<std::chrono::milliseconds>(total_deadline - Clock::now());
    auto conn = co_await pool->acquire(std::min(timeouts.connect, remaining), attempt > 0);
    if (!conn) {
      co_return std::move(conn).error();
    }
    const bool reused = (*conn)->uses > 0;
    std::unique_ptr<UpstreamCall> call(new UpstreamCall(pool, std::move(*conn)));
    if (cancel.cancelled()) {
      call->aborted_ = true;
      co_return client_gone_error();
    }
    cancel.on_cancel([raw = call.get()] { raw->abort(); });
    call->total_deadline_ = total_deadline;
    call->idle_ = timeouts.idle;
    call->total_ = timeouts.total;
    call->timings_.reused_connection = reused;
    call->timings_.acquire =
        std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - started);
    Phase phase = Phase::kWrite;
    boost::system::error_code ec = co_await call->send_and_read_head(request, timeouts, phase);
    if (!ec) {
      co_return std::move(call);
    }
    cancel.clear();
    call->failed_ = true;
    if (call->aborted_) {
      co_return client_gone_error();
    }
    if (phase == Phase::kWrite && reused && attempt == 0 && is_stale_connection_error(ec)) {
      continue;  // the idle connection was closed under us; the request never arrived whole
    }
    co_return start_error(pool->endpoint().provider_id, ec, phase == Phase::kReadHead,
                          Clock::now() >= total_deadline, timeouts);
  }
  co_return start_error(pool->endpoint().provider_id, net::error::connection_reset, false, false,
                        timeouts);
}

Error UpstreamCall::timeout_error() const {
  if (Clock::now() >= total_deadline_) {
    return Error(ErrorKind::kUpstreamTimeout, "provider '" + provider_id_ +
                                                  "' exceeded the total timeout of " +
                                                  std::to_string(total_.count()) + " ms")
        .with_code("upstream_total_timeout");
  }
  return Error(ErrorKind::kUpstreamTimeout, "provider '" + provider_id_ + "' sent nothing for " +
                                                std::to_string(idle_.count()) +
                                                " ms in the middle of its answer")
      .with_code("upstream_idle_timeout");
}

Awaitable<Result<std::size_t>> UpstreamCall::read_some(std::string& out) {
  // A read may consume only chunk framing and yield no body bytes; loop until it does.
  while (!parser_->is_done()) {
    parser_->get().body().data = conn_->scratch.get();
    parser_->get().body().size = UpstreamConnection::kScratchBytes;
    conn_->lowest().expires_at(std::min(total_deadline_, Clock::now() + idle_));
    auto [ec, n] = co_await std::visit(
        [&](auto& s) { return bhttp::async_read_some(s, conn_->buffer, *parser_, use_nothrow); },
        conn_->stream);
    const std::size_t got = UpstreamConnection::kScratchBytes - parser_->get().body().size;
    out.append(conn_->scratch.get(), got);
    if (ec == bhttp::error::need_buffer) {
      ec = {};
    }
    if (ec) {
      failed_ = true;
      if (aborted_) {
        co_return Error(ErrorKind::kClientGone, "client disconnected");
      }
      if (ec == beast::error::timeout) {
        co_return timeout_error();
      }
      co_return Error(ErrorKind::kUpstreamProtocol,
                      "connection to provider '" + provider_id_ + "' broke: " + ec.message())
          .with_code("upstream_stream_broken");
    }
    if (got > 0) {
      co_return got;
    }
  }
  co_return std::size_t{0};
}

Awaitable<Result<std::string>> UpstreamCall::read_all(std::size_t limit) {
  std::string body;
  if (auto len = parser_->content_length(); len && *len <= limit) {
    body.reserve(*len);
  }
  while (!parser_->is_done()) {
    auto n = co_await read_some(body);
    if (!n) {
      co_return n.error();
    }
    if (body.size() > limit) {
      failed_ = true;
      co_return Error(ErrorKind::kUpstreamProtocol, "response from provider '" + provider_id_ +
                                                        "' exceeds " + std::to_string(limit) +
                                                        " bytes")
          .with_code("upstream_response_too_large");
    }
    if (*n == 0) {
      break;
    }
  }
  co_return body;
}

}  // namespace sluice::http
