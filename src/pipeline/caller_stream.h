#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include <boost/asio/steady_timer.hpp>

#include "core/clock.h"
#include "pipeline/downstream.h"
#include "pipeline/request_context.h"
#include "pipeline/upstream_connector.h"
#include "providers/exchange.h"

namespace sluice::pipeline {

// The caller's side of one streamed model call, across all its attempts: whether the response
// head has gone out, the stream's writes, and the SSE comments that keep an idle stream open.
//
// Keep-alive: while the call waits (for an upstream's head, its first event, a retry backoff, a
// model thinking), a stream with nothing written for `heartbeat` gets `: keep-alive` (an SSE
// comment, which every SSE client ignores), so a load balancer's idle timeout (often 60 s) does
// not cut a reasoning model that thinks for minutes. Before the streaming commit point that
// means sending the 200 head early: the attempts may still fail over while nothing but comments
// went out (the held prelude stays held), but a final failure can no longer be a status: it ends
// the stream with the protocol's error event. The early head carries the standard fields known
// at that time.
//
// Writes come from the relay and from the keep-alive, one at a time: a relay write waits for a
// keep-alive write in flight (never the other way: a keep-alive skips while the relay writes).
//
// Held bytes on a clock: a stream-data filter that holds bytes back for a bounded time (the
// output guardrails' hold_back_ms) asks to run again when that time is up (rerun_filters_at).
// If the relay is then waiting for the upstream, the keep-alive runs the filters on no new
// bytes and writes what they release, so an upstream that pauses does not hold the caller's
// text past its bound. Only while the relay reads: bytes it has filtered but not yet written
// must go out first.
//
// One per streamed call, on its worker; lives in the call's frame.
class CallerStream {
 public:
  CallerStream(RequestContext& ctx, Downstream& downstream, const Clock& clock,
               std::chrono::milliseconds heartbeat);

  // The head is out (sent by begin() or early by the keep-alive).
  bool begun() const { return begun_; }
  bool ended() const { return ended_; }
  // Whether a keep-alive runs: with a sleeper to wait with (with the heartbeat off it only
  // reruns the filters).
  bool keeps_alive(const Sleeper* sleeper) const { return sleeper != nullptr; }

  // Sends `head` as the stream's head, unless one was already sent. False when the caller is
  // gone.
  Awaitable<bool> begin(const ResponseHead& head);
  // One piece of the stream; false when the caller is gone.
  Awaitable<bool> write(std::string_view bytes);
  // The stream's end (after stop_keep_alive). False when the caller is gone.
  Awaitable<bool> end();

  // Runs until stop_keep_alive(): whenever nothing was written for `heartbeat`, writes the
  // comment (after an early head when none went out). Waits with `sleeper`, so simulated time
  // drives it in tests. Start it beside the attempt loop (awaitable operator &&).
  Awaitable<void> keep_alive(Sleeper& sleeper);
  // Ends keep_alive() at its next wake-up (at once when it sleeps).
  void stop_keep_alive();
  // The stream-data filters, run on no new bytes: what they release lands in `out`; false when
  // one ended the stream (`out` holds its error event, already accounted for).
  using RerunFilters = std::function<bool(std::string& out)>;
  // How the keep-alive runs them (CallContext sets it when it opens the stream).
  void set_rerun_filters(RerunFilters rerun) { rerun_filters_ = std::move(rerun); }
  // A filter holds bytes until `due`: the filters run again then (the earliest request wins;
  // each run of the filters makes its own requests again). Needs the keep-alive running.
  void rerun_filters_at(Clock::Monotonic::time_point due);
  // The relay is (or no longer is) waiting for the upstream's next bytes, with everything it
  // filtered written.
  void relay_reading(bool reading) { relay_reading_ = reading; }

  // One keep-alive comment now (after an early head when none went out), for a writer that
  // keeps its own time instead of running keep_alive() (a cache follower waiting for a shared
  // call's events). False when the caller is gone.
  Awaitable<bool> beat();
  // The heartbeat for a keep_alive() started from now on: a stream opened by a follower is
  // the one its own attempts use when the shared call fails.
  void keep_alive_every(std::chrono::milliseconds heartbeat);
  // When the next keep-alive is due: `heartbeat` after the last write (never with it off).
  Clock::Monotonic::time_point next_beat() const {
    return heartbeat_.count() > 0 ? last_write_ + heartbeat_ : Clock::Monotonic::time_point::max();
  }
  // Before the call answers with a plain (non-stream) response instead: stops the keep-alive
  // and waits out a write of it in flight. True when nothing of a stream went out, so the plain
  // answer may; false when the head already did (then only an error event can follow).
  Awaitable<bool> claim_plain();
  // How many keep-alive comments went out (the access log's events count them).
  std::uint32_t heartbeats() const { return heartbeats_; }

 private:
  // Waits while a keep-alive write is in flight.
  Awaitable<void> wait_for_writer();
  Awaitable<bool> early_head();
  // The comment, after an early head when none went out.
  Awaitable<bool> comment();
  bool wrote(bool ok);
  // The filters' rerun, when due and the relay reads; false when the stream ended with it.
  Awaitable<bool> rerun_filters();

  RequestContext& ctx_;
  Downstream& downstream_;
  const Clock& clock_;
  std::chrono::milliseconds heartbeat_;
  Clock::Monotonic::time_point last_write_;
  bool begun_ = false;
  bool ended_ = false;
  bool gone_ = false;
  bool relay_writing_ = false;
  bool keep_alive_writing_ = false;
  bool stopped_ = false;
  std::uint32_t heartbeats_ = 0;
  bool relay_reading_ = false;
  RerunFilters rerun_filters_;
  Clock::Monotonic::time_point rerun_at_ = Clock::Monotonic::time_point::max();
  // The keep-alive's current sleep: cancelled to stop it, or to wake it for an earlier rerun
  // (a new one for each sleep, as a Cancellation fires once).
  std::optional<providers::Cancellation> sleep_cancel_;
  // Where a relay write waits for a keep-alive write to finish (cancelled to wake it).
  std::optional<boost::asio::steady_timer> writer_done_;
  // The early head's storage: Downstream::new_head() may be holding the relay's head.
  std::unique_ptr<ResponseHead> early_head_;
};

}  // namespace sluice::pipeline
