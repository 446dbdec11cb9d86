#pragma once

#include <chrono>
#include <optional>

#include "core/error.h"
#include "pipeline/downstream.h"
#include "pipeline/snapshot.h"
#include "providers/exchange.h"
#include "routing/plan.h"

namespace sluice::pipeline {

class CallContext;
class UpstreamRequest;

// The attempts of one model call: the route's policy tree ordered for this request
// (routing::AttemptPlan) and tried target by target, or the single pinned target
// (CallContext::pin_target). Each attempt: the before_attempt filters, the framing, the
// connector, then the answer relayed (answer_relay.h, stream_relay.h). A failure before
// anything reached the caller asks the plan for the next attempt (the same target after a
// backoff, or the next in the tree); after that, the caller gets the error in its protocol.
// Lives in the model call's frame.
class AttemptLoop {
 public:
  explicit AttemptLoop(CallContext& call) : call_(call) {}

  // Runs attempts until one answers the caller, the plan stops or the caller goes.
  Awaitable<void> run();

  // A failure before anything reached the caller: true when the plan has a next attempt, which
  // then runs instead (nothing is written for this one). `exchange` gives the upstream's
  // Retry-After when it answered. Always false for a pinned target.
  bool fail_over(const Error& error, int status, const providers::Exchange* exchange);

 private:
  // One attempt at `target`; writes the caller's answer unless the caller is gone or the
  // failure went to the next attempt (next_ set).
  Awaitable<void> attempt(const TargetRuntime& target);
  // The before_attempt filters; false when the attempt is not sent (refused, answered
  // locally, or failed over).
  Awaitable<bool> attempt_filters(UpstreamRequest& up);
  // The body, then the head (no I/O); the error that refuses the request, if any.
  std::optional<Error> frame(UpstreamRequest& up);
  // Sends the framed attempt and relays what comes back.
  Awaitable<void> exchange(UpstreamRequest& up);
  // The record of an attempt being sent, and the breaker's view of its target.
  void begin_record(UpstreamRequest& up);

  CallContext& call_;
  routing::AttemptPlan* plan_ = nullptr;            // during run(), unless pinned
  std::optional<routing::AttemptPlan::Step> next_;  // set by fail_over()
  std::chrono::milliseconds backoff_{0};            // waited before the current attempt
};

// The wait a failed attempt asked for: the upstream's retry-after-ms / Retry-After headers,
// else what its adapter read from the error body (Gemini's google.rpc.RetryInfo retryDelay).
std::optional<std::chrono::milliseconds> asked_wait(const Error& error,
                                                    const providers::Exchange* exchange);

}  // namespace sluice::pipeline
