#pragma once

#include "ir/usage.h"
#include "pipeline/request_context.h"

namespace sluice::pipeline {

// Subscribes to what requests do. The pipeline calls every registered observer, on the
// request's worker thread, in registration order; observers never call back into the pipeline
// and must not block (hand slow work to a bounded queue, as the access log does). The access log
// is the first observer; metrics, traces, the usage sink and limiter settlement subscribe the
// same way.
class RequestObserver {
 public:
  virtual ~RequestObserver() = default;

  // An upstream attempt ended (successfully or not); `attempt` is ctx.attempts.back().
  virtual void on_attempt(const RequestContext& ctx, const Attempt& attempt) {}
  // The final usage of the model call is known (once per request, when the upstream reported
  // it; in IR terms, exactly as the upstream reported it).
  virtual void on_usage(const RequestContext& ctx, const ir::Usage& usage) {}
  // The request is over: the response is written (or the caller left), ctx is final.
  virtual void on_finish(const RequestContext& ctx) {}
};

}  // namespace sluice::pipeline
