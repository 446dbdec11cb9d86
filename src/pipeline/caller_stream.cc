#include "pipeline/caller_stream.h"

#include <algorithm>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "pipeline/error_reply.h"

namespace sluice::pipeline {

namespace {

// An SSE comment line (WHATWG HTML, "event stream interpretation": a line starting with a colon
// is ignored), blank line included so it never joins the next event.
constexpr std::string_view kKeepAlive = ": keep-alive\n\n";

constexpr std::chrono::milliseconds kIdleSleep = std::chrono::hours(1);

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
  if (gone_ || ended_) {
    co_return false;  // ended: by a filter's rerun that stopped the stream
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
  if (sleep_cancel_) {
    sleep_cancel_->cancel();
  }
}

void CallerStream::rerun_filters_at(Clock::Monotonic::time_point due) {
  if (due >= rerun_at_) {
    return;
  }
  rerun_at_ = due;
  if (sleep_cancel_) {
    sleep_cancel_->cancel();  // wakes the keep-alive to sleep until the earlier time
  }
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
    const auto now = clock_.now();
    if (rerun_at_ <= now) {
      rerun_at_ = Clock::Monotonic::time_point::max();
      const bool open = co_await rerun_filters();
      if (!open) {
        break;
      }
      continue;
    }
    const auto due = std::min(next_beat(), rerun_at_);
    if (now < due) {
      // Nothing due (the heartbeat off, no rerun asked for): an hour at a time, woken early.
      const auto left = due - now;
      const std::chrono::milliseconds wait =
          left > kIdleSleep ? kIdleSleep : std::chrono::ceil<std::chrono::milliseconds>(left);
      sleep_cancel_.emplace();
      co_await sleeper.sleep(wait, *sleep_cancel_);  // early: stopped, or a sooner rerun
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

Awaitable<bool> CallerStream::rerun_filters() {
  // Not while the relay has bytes of its own between the filters and the caller (they go out
  // first; its next write runs the filters anyway), nor before its head (nothing is held then).
  if (!relay_reading_ || relay_writing_ || !begun_ || !rerun_filters_ ||
      downstream_.client_gone()) {
    co_return true;
  }
  std::string out;
  const bool go_on = rerun_filters_(out);
  if (out.empty()) {
    co_return true;
  }
  keep_alive_writing_ = true;
  bool ok = co_await downstream_.write(ctx_, out);
  if (ok && !go_on) {
    ended_ = true;
    ok = co_await downstream_.end_stream(ctx_);
  }
  keep_alive_writing_ = false;
  if (writer_done_) {
    writer_done_->cancel();  // wakes a relay write waiting for this one
  }
  wrote(ok);
  co_return ok&& go_on;
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
