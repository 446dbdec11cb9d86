#pragma once

#include <string_view>

#include "codec/request_head.h"
#include "pipeline/call_context.h"
#include "pipeline/downstream.h"
#include "pipeline/request_context.h"

namespace sluice::pipeline {

class Pipeline;

// The driver of one model call (a POST to an ingress codec's path): it runs the route's filter
// chain around the attempt loop, and knows no feature by name.
//
//   decode        the ingress codec validates the body (400 in the caller's protocol)
//   route         alias -> route and its filter chain, the key's allow-list (404 / 403)
//   after_decode  filters: rewrite or refuse the request (output cap, budgets)
//   before_plan   filters: admit, pin, or answer (rate limits, Responses affinity)
//   attempts      the plan's attempts (attempt_loop.h), with the before_attempt and
//                 response-side filters; a streamed call gets its caller stream, kept alive
//                 by SSE comments while nothing else is written (caller_stream.h)
//   end           usage to the observers, the charge, every filter's on_end
//
// The client-disconnect watch covers every stage that waits on an upstream and cancels it at
// once. docs/life_of_a_request.md walks through it. Lives on the request's coroutine frame.
class ModelCall final {
 public:
  // Serves one model call: constructs the call and runs it.
  static Awaitable<void> serve(const Pipeline& pipeline, RequestContext& ctx,
                               const codec::RequestHead& head, std::string_view body,
                               Downstream& downstream);

  ModelCall(const Pipeline& pipeline, RequestContext& ctx, const codec::RequestHead& head,
            Downstream& downstream);

  Awaitable<void> run(std::string_view body);

 private:
  // The request-side filters before any attempt: false when one ended the call (its answer,
  // or its refusal, is written).
  Awaitable<bool> request_filters();
  // The after_decode filters (no I/O), then the before_plan ones: the status that ended the
  // call, if one did.
  std::optional<FilterStatus> after_decode_filters();
  Awaitable<std::optional<FilterStatus>> before_plan_filters();
  // The attempt loop under the disconnect watch; for a stream, beside its keep-alive.
  Awaitable<void> attempts();
  // The attempt loop, then the keep-alive's end (for awaitable operator &&).
  Awaitable<void> attempts_then_quiet();
  // A chain with alongside hooks: the call from after decode, beside them.
  Awaitable<void> with_alongside();
  // The before_plan filters, then the attempts unless one ended the call.
  Awaitable<void> planned_call();
  Awaitable<void> alongside_filters();
  // A request-side filter ended the call: its refusal answered (an answer it wrote stands).
  Awaitable<void> ended_by(const FilterStatus& ended);
  // What every call that got a route does last.
  void end();

  const Pipeline& pipeline_;
  CallContext call_;
};

}  // namespace sluice::pipeline
