#include "pipeline/caller_stream.h"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "pipeline/error_reply.h"

namespace sluice::pipeline {

namespace {

// An SSE comment line (WHATWG HTML, "event stream interpretation": a line starting with a colon
// is ignored), blank line included so it never joins the next event.
constexpr std::string_view kKeepAlive = ": keep-alive\n\n";

}  // namespace

CallerStream::CallerStream(RequestContext& ctx, Downstream& downstream, const Clock& clock,
                           std::chrono::milliseconds heartbeat)
    : ctx_(ctx),
      downstream_(downstream),
      clock_(clock),
      heartbeat_(heartbeat),
      last_write_(clock.now()) {}

bool CallerStream::wrote(bool ok) {
  last_write_ = clock_.now();
  gone_ = gone_ || !ok;
  return ok;
}

Awaitable<void> CallerStream::wait_for_writer() {
  while (keep_alive_writing_) {
    if (!writer_done_) {
      writer_done_.emplace(co_await boost::asio::this_coro::executor,
                           boost::asio::steady_timer::time_point::max());
    }
    // Never expires: the keep-alive cancels it when its write is done.
    co_await writer_done_->async_wait(boost::asio::as_tuple(boost::asio::use_awaitable));
  }
}

Awaitable<bool> CallerStream::begin(const ResponseHead& head) {
  co_await wait_for_writer();
  if (begun_) {
    co_return !gone_;
  }
  begun_ = true;
  relay_writing_ = true;
  const bool ok = co_await downstream_.begin_stream(ctx_, head);
  relay_writing_ = false;
  co_return wrote(ok);
}

Awaitable<bool> CallerStream::write(std::string_view bytes) {
  co_await wait_for_writer();
  if (gone_) {
    co_return false;
  }
  relay_writing_ = true;
  const bool ok = co_await downstream_.write(ctx_, bytes);
  relay_writing_ = false;
  co_return wrote(ok);
}

Awaitable<bool> CallerStream::end() {
  stop_keep_alive();
  co_await wait_for_writer();
  if (gone_ || ended_) {
    co_return !gone_;
  }
  ended_ = true;
  const bool ok = co_await downstream_.end_stream(ctx_);
  co_return wrote(ok);
}

void CallerStream::stop_keep_alive() {
  stopped_ = true;
  sleep_cancel_.cancel();
}

Awaitable<bool> CallerStream::claim_plain() {
  stop_keep_alive();
  co_await wait_for_writer();
  co_return !begun_;
}

Awaitable<bool> CallerStream::early_head() {
  early_head_ = std::make_unique<ResponseHead>();
  ResponseHead& head = *early_head_;
  head.content_type = "text/event-stream";
  add_standard_fields(ctx_, head);
  // The early head goes out without the response-head filters (no upstream head exists yet);
  // what the cache did is known by now, and a caller reads it from this head or not at all.
  if (!ctx_.cache.empty()) {
    head.headers.add("x-sluice-cache", ctx_.cache);
  }
  head.headers.add("Cache-Control", "no-store");
  head.headers.add("X-Accel-Buffering", "no");
  begun_ = true;
  co_return co_await downstream_.begin_stream(ctx_, head);
}

Awaitable<void> CallerStream::keep_alive(Sleeper& sleeper) {
  while (!stopped_ && !gone_ && !ended_) {
    const auto due = next_beat();
    const auto now = clock_.now();
    if (now < due) {
      const auto wait = std::chrono::ceil<std::chrono::milliseconds>(due - now);
      const bool slept = co_await sleeper.sleep(wait, sleep_cancel_);
      if (!slept) {
        break;
      }
      continue;
    }
    if (relay_writing_ || downstream_.client_gone()) {
      last_write_ = now;  // a write in flight is activity: the stream is not idle
      continue;
    }
    keep_alive_writing_ = true;
    const bool ok = co_await comment();
    keep_alive_writing_ = false;
    if (writer_done_) {
      writer_done_->cancel();  // wakes a relay write waiting for this one
    }
    wrote(ok);
  }
}

Awaitable<bool> CallerStream::beat() { co_return wrote(co_await comment()); }

Awaitable<bool> CallerStream::comment() {
  bool ok = true;
  if (!begun_) {
    ok = co_await early_head();
  }
  if (ok) {
    ok = co_await downstream_.write(ctx_, kKeepAlive);
    ++heartbeats_;
  }
  co_return ok;
}

void CallerStream::keep_alive_every(std::chrono::milliseconds heartbeat) { heartbeat_ = heartbeat; }

}  // namespace sluice::pipeline
