#include "pipeline/attempt_loop.h"

#include <random>

#include "pipeline/answer_relay.h"
#include "pipeline/call_context.h"
#include "pipeline/pipeline.h"
#include "pipeline/upstream_relay.h"
#include "pipeline/upstream_request.h"
#include "providers/adapter.h"

namespace sluice::pipeline {

namespace {

using std::chrono::duration_cast;
using std::chrono::microseconds;

// A per-request random number for load balancing and jitter, from a per-thread generator.
std::uint64_t request_seed() {
  thread_local std::mt19937_64 generator{std::random_device{}()};
  return generator();
}

bool is_success(int status) { return status >= 200 && status < 300; }

// Whether an attempt's failure says the target is unhealthy (for its circuit breaker): no
// answer, a broken answer, or a 5xx. A 429 is the provider's quota, not its health; 4xx are the
// request's fault.
bool unhealthy(const Attempt& attempt) {
  if (!attempt.error) {
    return attempt.status >= 500;
  }
  switch (attempt.error->kind()) {
    case ErrorKind::kUpstreamUnreachable:
    case ErrorKind::kUpstreamTimeout:
    case ErrorKind::kUpstreamProtocol:
      return true;
    case ErrorKind::kUpstreamStatus:
      return attempt.status >= 500 || attempt.error->http_status() >= 500;
    default:
      return false;
  }
}

// Whatever way a sent attempt ends: its load is gone from the target and its health is known.
class Settle {
 public:
  Settle(CallContext& call, routing::TargetHealth& health) : call_(call), health_(health) {
    health_.in_flight.fetch_add(1, std::memory_order_relaxed);
  }
  Settle(const Settle&) = delete;
  Settle& operator=(const Settle&) = delete;
  ~Settle() {
    health_.in_flight.fetch_sub(1, std::memory_order_relaxed);
    const RequestContext& ctx = call_.ctx();
    const Attempt& a = ctx.attempts.back();
    if (ctx.outcome == Outcome::kClientGone && !a.error) {
      return;  // the caller left: nothing learnt about the target
    }
    if (a.first_byte.count() >= 0) {
      health_.observe_ttfb(a.first_byte);
    }
    health_.breaker.record(call_.clock().now(), unhealthy(a), call_.config().routing.breaker);
  }

 private:
  CallContext& call_;
  routing::TargetHealth& health_;
};

}  // namespace

std::optional<std::chrono::milliseconds> asked_wait(const Error& error,
                                                    const providers::Exchange* exchange) {
  if (exchange != nullptr) {
    if (auto asked = providers::asked_retry_after(*exchange)) {
      return asked;
    }
  }
  if (error.retry_after_seconds() > 0) {
    return std::chrono::seconds(error.retry_after_seconds());
  }
  return std::nullopt;
}

Awaitable<void> AttemptLoop::run() {
  const RouteRuntime& route = call_.route();
  if (const std::optional<std::size_t> pinned = call_.pinned_target()) {
    // A continuation goes to the provider that stored what it continues, and only there: no
    // other target holds that state, so there is nothing to fail over to.
    co_await attempt(route.targets[*pinned]);
    co_return;
  }
  routing::AttemptPlan plan(route.policy, call_.clock().now(), request_seed(), &call_);
  plan_ = &plan;
  routing::AttemptPlan::Step step = plan.first();
  Sleeper* sleeper = call_.parts().sleeper;
  for (;;) {
    next_.reset();
    co_await attempt(route.targets[step.target]);
    if (!next_ || call_.cancel().cancelled()) {
      break;
    }
    step = *next_;
    if (step.wait.count() > 0 && sleeper != nullptr) {
      const bool waited = co_await sleeper->sleep(step.wait, call_.cancel());
      if (!waited || call_.downstream().client_gone()) {
        call_.client_gone(
            Error(ErrorKind::kClientGone, "client disconnected during a retry backoff"));
        break;
      }
    }
    backoff_ = step.wait;
  }
  plan_ = nullptr;
}

bool AttemptLoop::fail_over(const Error& error, int status, const providers::Exchange* exchange) {
  if (plan_ == nullptr || call_.cancel().cancelled() || call_.downstream().client_gone()) {
    return false;
  }
  routing::Failure failure;
  failure.status = status;
  // The gateway's own pool for this provider is full: another target may well have room.
  failure.retryable = error.retryable() || error.kind() == ErrorKind::kRateLimited;
  failure.retry_after = asked_wait(error, exchange);
  next_ = plan_->after_failure(failure, call_.clock().now());
  if (!next_) {
    call_.ctx().retry_stop = plan_->stop_reason();  // a literal: outlives the plan
  }
  return next_.has_value();
}

Awaitable<bool> AttemptLoop::attempt_filters(UpstreamRequest& up) {
  for (Filter* filter : call_.chain().at(FilterHook::kBeforeAttempt)) {
    const FilterStatus status = co_await filter->before_attempt(call_, up);
    if (status.action() == FilterStatus::Action::kAnswered) {
      co_return false;
    }
    if (status.action() == FilterStatus::Action::kStop) {
      if (!fail_over(status.error(), 0, nullptr)) {
        co_await call_.fail(status.error(), Outcome::kNone);
      }
      co_return false;
    }
  }
  co_return true;
}

std::optional<Error> AttemptLoop::frame(UpstreamRequest& up) {
  if (std::optional<Error> refused = up.frame_body()) {
    return refused;
  }
  up.frame_head(plan_ != nullptr ? std::optional(plan_->deadline()) : std::nullopt);
  return std::nullopt;
}

void AttemptLoop::begin_record(UpstreamRequest& up) {
  RequestContext& ctx = call_.ctx();
  up.set_record(ctx.attempts.size());
  Attempt& record = ctx.attempts.emplace_back();
  const TargetRuntime& target = up.target();
  record.provider = up.adapter().id();
  record.model = target.model;
  record.passthrough = up.passthrough();
  record.path = target.path;
  record.backoff = backoff_;
  record.span = up.span();
  const auto started = call_.clock().now();
  record.started = duration_cast<microseconds>(started - ctx.started);
  routing::TargetHealth& health = *target.health;
  if (health.breaker.state() != routing::Breaker::State::kClosed) {
    record.breaker = routing::to_string(health.breaker.state());
  } else if (health.in_backoff(started)) {
    record.breaker = "backoff";  // closed, but the target asked for room (a 429)
  }
  health.breaker.on_attempt(started);
}

Awaitable<void> AttemptLoop::attempt(const TargetRuntime& target) {
  UpstreamRequest up(call_, target);
  if (!call_.chain().at(FilterHook::kBeforeAttempt).empty()) {
    const bool send = co_await attempt_filters(up);
    if (!send) {
      co_return;
    }
  }
  if (std::optional<Error> refused = frame(up)) {
    co_await call_.fail(*refused, Outcome::kNone);
    co_return;
  }
  begin_record(up);
  const auto started = call_.clock().now();
  Settle settle(call_, *target.health);
  co_await exchange(up);
  RequestContext& ctx = call_.ctx();
  // The record may have moved if an observer added attempts: indexed, not held.
  Attempt& done = up.record();
  done.duration = duration_cast<microseconds>(call_.clock().now() - started);
  if (up.failure) {
    done.error = std::move(up.failure);
  } else if ((!is_success(done.status) || ctx.outcome == Outcome::kMidstreamError) && ctx.error) {
    // A stream that broke after its commit point failed too (for the breaker and the log).
    done.error = ctx.error;
  }
  for (RequestObserver* observer : call_.parts().observers) {
    observer->on_attempt(ctx, ctx.attempts.back());
  }
}

Awaitable<void> AttemptLoop::exchange(UpstreamRequest& up) {
  auto opened = co_await call_.parts().connector->open(up.framed(), call_.cancel());
  if (!opened) {
    const Error& error = opened.error();
    up.failure = error;
    if (error.kind() == ErrorKind::kClientGone || call_.downstream().client_gone()) {
      call_.client_gone(error);
    } else if (!fail_over(error, 0, nullptr)) {
      co_await call_.fail(error, Outcome::kUpstreamError);
    }
    co_return;
  }
  up.set_exchange(std::move(*opened));
  providers::Exchange& exchange = up.exchange();
  call_.cancel().on_cancel([&exchange] { exchange.abort(); });
  record_exchange(exchange, up.record());
  AnswerRelay relay(call_, *this, up);
  if (is_success(exchange.status())) {
    co_await relay.success();
  } else {
    co_await relay.failure();
  }
  call_.cancel().clear();
}

}  // namespace sluice::pipeline
