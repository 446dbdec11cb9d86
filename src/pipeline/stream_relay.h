#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "codec/sse.h"
#include "codec/upstream_events.h"
#include "core/error.h"
#include "pipeline/downstream.h"

namespace sluice::pipeline {

class AttemptLoop;
class CallContext;
class UpstreamRequest;

// Relays one attempt's event stream to the caller as it arrives: one write per upstream read,
// nothing buffered beyond the event being assembled, every event through the attempt's
// transform (UpstreamRequest::transform) and the stream-data filters. A stream that breaks,
// times out or ends before its final answer ends with the caller protocol's error event, never
// a silent truncation.
//
// The streaming commit point, as a table of states (rows) and what happens in them:
//
//   state       output            broken / ended early          caller gone
//   kHolding    held back         next attempt if the plan      stop, nothing written
//                                 allows, else commit
//     -> kStreaming when the transform commits (model output: content, reasoning or a tool
//        call; or the final answer), the upstream stops, or the prelude outgrows 64 KiB
//   kStreaming  written           the error event, then end     stop (kCallerGone)
//     -> kAnswered when the whole answer, terminator included, has been written
//   kAnswered   written           ignored: the answer is        ignored: the answer is
//                                 complete (the upstream's      complete (the OpenAI SDK
//                                 connection is not reused)     hangs up after [DONE])
//   kFailedOver, kCallerGone, kStopped (a response filter ended the call): terminal.
//
// Before the commit point the caller has seen nothing of this attempt (at most a keep-alive
// head and comments: caller_stream.h), so another attempt may answer instead. One per streamed
// attempt, on its worker.
class StreamRelay {
 public:
  StreamRelay(CallContext& call, AttemptLoop& loop, UpstreamRequest& up);

  Awaitable<void> run();

 private:
  enum class State : std::uint8_t {
    kHolding,
    kStreaming,
    kAnswered,
    kFailedOver,
    kCallerGone,
    kStopped,
  };

  // Reads once from the upstream and feeds the transform: what the caller gets lands in out_.
  Awaitable<void> read_once();
  void feed_events(codec::UpstreamEvents::Status status, codec::SseEvent& event, bool at_end);
  // kHolding after a read: hold, fail over, or commit.
  Awaitable<void> hold_or_commit(bool stopping);
  // The head goes out (or went out early): kStreaming, or kStopped / kCallerGone.
  Awaitable<void> commit();
  // out_ through the stream-data filters to the caller.
  Awaitable<void> write_out();
  // The transform's figures (usage, finish reason) into the request's context: before each
  // write that may be the last, so the filters reading it (the cache storing the answer when
  // the terminator passes) have them, and once more at the end.
  void report();
  // After the last read: the stream's end for the state it stopped in.
  Awaitable<void> finish();
  Awaitable<void> end_answered();
  Awaitable<void> end_unanswered();
  bool terminal() const {
    return state_ == State::kFailedOver || state_ == State::kCallerGone ||
           state_ == State::kStopped;
  }

  CallContext& call_;
  AttemptLoop& loop_;
  UpstreamRequest& up_;
  codec::UpstreamEvents events_;  // SSE, or Bedrock's event stream
  std::string in_;
  std::string out_;
  std::string held_;  // the prelude, before the commit point
  State state_ = State::kHolding;
  std::optional<Error> failure_;  // of the upstream read, or an oversized event
  bool ended_ = false;            // the upstream body ended cleanly
  // Passthrough of an event stream (Bedrock's Invoke): its exceptions are the adapter's to read
  // (ProviderAdapter::stream_failure), not events of the caller's protocol.
  bool adapter_reads_failures_ = false;
};

}  // namespace sluice::pipeline
