#include "pipeline/model_call.h"

#include <algorithm>

#include <boost/asio/experimental/awaitable_operators.hpp>

#include "pipeline/attempt_loop.h"
#include "pipeline/pipeline.h"
#include "pipeline/usage_observer.h"

namespace sluice::pipeline {

ModelCall::ModelCall(const Pipeline& pipeline, RequestContext& ctx, const codec::RequestHead& head,
                     Downstream& downstream)
    : pipeline_(pipeline), call_(pipeline, ctx, head, downstream) {}

Awaitable<void> ModelCall::serve(const Pipeline& pipeline, RequestContext& ctx,
                                 const codec::RequestHead& head, std::string_view body,
                                 Downstream& downstream) {
  ModelCall call(pipeline, ctx, head, downstream);
  co_await call.run(body);
}

Awaitable<void> ModelCall::run(std::string_view body) {
  RequestContext& ctx = call_.ctx();
  std::optional<Error> refused = call_.decode(body);
  if (!refused) {
    refused = call_.resolve_route(pipeline_.chains(ctx.snapshot));
  }
  if (refused) {
    co_await pipeline_.reject(ctx, *refused, call_.downstream());
    co_return;
  }
  const FilterChain& chain = call_.chain();
  if (!chain.at(FilterHook::kAlongside).empty()) {
    co_await with_alongside();
    end();
    co_return;
  }
  bool admitted = true;
  if (!chain.at(FilterHook::kAfterDecode).empty() || !chain.at(FilterHook::kBeforePlan).empty()) {
    admitted = co_await request_filters();
  }
  if (admitted) {
    co_await attempts();
  }
  end();
}

// A chain with work beside the call (a guardrail checker asked while the upstream answers):
// once after_decode lets the request through, that work and the rest of the call run at once,
// and the call ends when both have. If the call's attempts ended without a word to the caller
// (the work cancelled them: a block), the caller is answered now, with what it found.
Awaitable<void> ModelCall::with_alongside() {
  if (std::optional<FilterStatus> ended = after_decode_filters()) {
    co_await ended_by(*ended);
    co_return;
  }
  using boost::asio::experimental::awaitable_operators::operator&&;
  call_.set_alongside_running(true);
  co_await (planned_call() && alongside_filters());
  call_.set_alongside_running(false);
  if (call_.must_release() && !call_.caller_left()) {
    std::optional<Error> stopped = co_await call_.release(nullptr);
    if (stopped) {
      co_await call_.fail(*stopped, Outcome::kNone);
    }
  }
}

Awaitable<void> ModelCall::planned_call() {
  std::optional<FilterStatus> ended;
  if (!call_.chain().at(FilterHook::kBeforePlan).empty()) {
    ended = co_await before_plan_filters();
  }
  if (ended) {
    co_await ended_by(*ended);
  } else {
    co_await attempts();
  }
}

Awaitable<void> ModelCall::ended_by(const FilterStatus& ended) {
  if (ended.action() == FilterStatus::Action::kStop) {
    co_await call_.fail(ended.error(), Outcome::kNone);
  }
}

Awaitable<void> ModelCall::alongside_filters() {
  for (Filter* filter : call_.chain().at(FilterHook::kAlongside)) {
    co_await filter->alongside(call_);
  }
}

std::optional<FilterStatus> ModelCall::after_decode_filters() {
  for (Filter* filter : call_.chain().at(FilterHook::kAfterDecode)) {
    FilterStatus status = filter->after_decode(call_);
    if (!status.proceeds()) {
      return status;
    }
  }
  return std::nullopt;
}

Awaitable<std::optional<FilterStatus>> ModelCall::before_plan_filters() {
  for (Filter* filter : call_.chain().at(FilterHook::kBeforePlan)) {
    FilterStatus status = co_await filter->before_plan(call_);
    if (!status.proceeds()) {
      co_return status;
    }
  }
  co_return std::nullopt;
}

Awaitable<bool> ModelCall::request_filters() {
  std::optional<FilterStatus> ended = after_decode_filters();
  // Only a chain with before_plan filters pays for the coroutine that runs them.
  if (!ended && !call_.chain().at(FilterHook::kBeforePlan).empty()) {
    ended = co_await before_plan_filters();
  }
  if (!ended) {
    co_return true;
  }
  co_await ended_by(*ended);
  co_return false;
}

Awaitable<void> ModelCall::attempts() {
  ScopedWatch watch(call_.downstream(), [this] { call_.cancel().cancel(); });
  if (!call_.request().stream) {
    AttemptLoop loop(call_);
    co_await loop.run();
    co_return;
  }
  const config::Route& route = *call_.route().config;
  CallerStream& stream =
      call_.open_stream(route.heartbeat.value_or(call_.config().server.heartbeat));
  Sleeper* sleeper = call_.parts().sleeper;
  if (!stream.keeps_alive(sleeper)) {
    AttemptLoop loop(call_);
    co_await loop.run();
  } else {
    using boost::asio::experimental::awaitable_operators::operator&&;
    co_await (attempts_then_quiet() && stream.keep_alive(*sleeper));
  }
  if (stream.begun() && !stream.ended() && !call_.downstream().client_gone()) {
    // Every way out of the loop ends a stream it began; a head sent early by the keep-alive
    // with nothing after it (the call ended without an answer) still needs its end.
    co_await stream.end();
  }
}

Awaitable<void> ModelCall::attempts_then_quiet() {
  AttemptLoop loop(call_);
  co_await loop.run();
  call_.stream()->stop_keep_alive();
}

namespace {

// A route that bills reused answers at a share of their price: the request is charged that
// share (and its budgets count it), and only the rest was saved.
void bill_share_of_saved(RequestContext& ctx) {
  if (ctx.saved_bill_percent == 0 || !ctx.saved_charge->priced) {
    return;
  }
  metering::Charge billed = metering::share_of(*ctx.saved_charge, ctx.saved_bill_percent);
  ctx.saved_charge->micros = std::max<std::int64_t>(0, ctx.saved_charge->micros - billed.micros);
  ctx.charge = std::move(billed);
}

}  // namespace

void ModelCall::end() {
  RequestContext& ctx = call_.ctx();
  if (ctx.usage) {
    for (RequestObserver* observer : call_.parts().observers) {
      observer->on_usage(ctx, *ctx.usage);
    }
  }
  // Charged once, here, for the filters' on_end and every observer to read (usage record,
  // metrics, budgets), with the prices of the version the request pinned and the time it
  // entered.
  if (gets_usage_record(ctx)) {
    ctx.charge = ctx.snapshot->price_book().charge(charge_input(ctx));
    if (ctx.saved_usage) {
      metering::ChargeInput saved = charge_input(ctx);
      saved.usage = *ctx.saved_usage;
      saved.usage_reported = true;
      ctx.saved_charge = ctx.snapshot->price_book().charge(saved);
      bill_share_of_saved(ctx);
    }
  }
  call_.end_filters();
}

}  // namespace sluice::pipeline
