#include "config/routing.h"

#include "config/loader.h"

namespace sluice::config {
namespace {

BreakerSettings load_breaker(const YamlField& field, BreakerSettings base) {
  const YamlMap m = field.map({"enabled", "error_rate", "min_requests", "window_ms", "open_ms"});
  if (auto f = m.get("enabled")) {
    base.enabled = f->boolean();
  }
  if (auto f = m.get("error_rate")) {
    base.error_rate = ratio(*f, 0.01, 1.0);
  }
  if (auto f = m.get("min_requests")) {
    base.min_requests = static_cast<std::uint32_t>(f->unsigned_in(1, 1'000'000));
  }
  if (auto f = m.get("window_ms")) {
    base.window = f->millis_in(100, kMaxMillis);
  }
  if (auto f = m.get("open_ms")) {
    base.open = f->millis_in(1, kMaxMillis);
  }
  return base;
}

}  // namespace

RetrySettings load_retry(const YamlField& field, RetrySettings base) {
  const YamlMap m =
      field.map({"max_attempts", "per_target_attempts", "backoff_base_ms", "backoff_max_ms",
                 "retry_after_max_ms", "budget_ratio", "budget_burst", "deadline_ms"});
  if (auto f = m.get("max_attempts")) {
    base.max_attempts = static_cast<std::uint32_t>(f->unsigned_in(1, 20));
  }
  if (auto f = m.get("per_target_attempts")) {
    base.per_target_attempts = static_cast<std::uint32_t>(f->unsigned_in(1, 10));
  }
  if (auto f = m.get("backoff_base_ms")) {
    base.backoff_base = f->millis_in(1, kMaxMillis);
  }
  if (auto f = m.get("backoff_max_ms")) {
    base.backoff_max = f->millis_in(1, kMaxMillis);
  }
  if (base.backoff_max < base.backoff_base) {
    m.self().fail("backoff_max_ms must not be below backoff_base_ms");
  }
  if (auto f = m.get("retry_after_max_ms")) {
    base.retry_after_max = f->millis_in(0, kMaxMillis);
  }
  if (auto f = m.get("budget_ratio")) {
    base.budget_ratio = ratio(*f, 0.0, 1.0);
  }
  if (auto f = m.get("budget_burst")) {
    base.budget_burst = static_cast<std::uint32_t>(f->unsigned_in(0, 100000));
  }
  if (auto f = m.get("deadline_ms")) {
    base.deadline = f->millis_in(1, kMaxMillis);
  }
  return base;
}

RoutingSettings load_routing(const YamlField& field) {
  const YamlMap m = field.map({"retry", "circuit_breaker", "budget_window_ms"});
  RoutingSettings r;
  if (auto f = m.get("retry")) {
    r.retry = load_retry(*f, r.retry);
  }
  if (auto f = m.get("budget_window_ms")) {
    r.budget_window = f->millis_in(100, 3600000);
  }
  if (auto f = m.get("circuit_breaker")) {
    r.breaker = load_breaker(*f, r.breaker);
  }
  return r;
}

}  // namespace sluice::config
