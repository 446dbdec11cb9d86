#pragma once

#include "pipeline/downstream.h"

namespace sluice::pipeline {

class AttemptLoop;
class CallContext;
class UpstreamRequest;

// What an attempt's upstream answered, relayed to the caller: a success (a complete body,
// verbatim or re-encoded, or a stream through StreamRelay) or a failure status (classified by
// the adapter; failed over while the plan allows, else answered in the caller's protocol, the
// provider's own error object as it is when both sides speak one protocol). One per attempt.
// The head of a successful answer: the upstream's status, the standard fields and the
// adapter's relayed headers, in Downstream::new_head().
ResponseHead& success_head(CallContext& call, UpstreamRequest& up);

class AnswerRelay {
 public:
  AnswerRelay(CallContext& call, AttemptLoop& loop, UpstreamRequest& up)
      : call_(call), loop_(loop), up_(up) {}

  // The upstream answered 2xx.
  Awaitable<void> success();
  // The upstream answered with another status.
  Awaitable<void> failure();

 private:
  Awaitable<void> complete_body();

  CallContext& call_;
  AttemptLoop& loop_;
  UpstreamRequest& up_;
};

}  // namespace sluice::pipeline
