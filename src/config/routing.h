#pragma once

#include <cstdint>

#include "config/values.h"

namespace sluice::config {

class YamlField;

// How a route retries: the same target again and the next ones in its policy tree.
struct RetrySettings {
  // Attempts per request in total, the first included; 0 = one per target of the tree.
  std::uint32_t max_attempts = 0;
  // Attempts at one target before the tree moves on (1 = no retry on the same target).
  std::uint32_t per_target_attempts = 1;
  // Full-jitter exponential backoff between attempts at the same target:
  // uniform(0, min(backoff_max, backoff_base * 2^n)).
  Millis backoff_base{100};
  Millis backoff_max{2000};
  // An upstream asking (Retry-After, retry-after-ms) for a longer wait than this is not waited
  // for: the next target is tried instead.
  Millis retry_after_max{5000};
  // Retries at the same target may not exceed this fraction of requests over the sliding
  // window RoutingSettings::budget_window, per target and per instance, plus `budget_burst`
  // retries per window whatever the traffic (moving on to the next target in the tree is not a
  // retry: it spends nothing). The per-instance budget follows the config-wide `routing.retry`
  // values; a route's own values apply to its targets' budgets.
  double budget_ratio = 0.1;
  std::uint32_t budget_burst = 10;
  // Bounds all attempts of a request together, backoffs included; 0 = the longest total
  // timeout among the route's targets.
  Millis deadline{0};
};

// Per target, per instance (docs/routing.md "Circuit breaker").
struct BreakerSettings {
  bool enabled = true;
  double error_rate = 0.5;          // failures / requests over the window that opens it
  std::uint32_t min_requests = 20;  // below this many requests in the window it stays closed
  Millis window{10000};
  Millis open{15000};  // open for this long, then one probe (half-open)
};

struct RoutingSettings {
  RetrySettings retry;  // default for routes without their own
  BreakerSettings breaker;
  // The sliding window retry budgets count requests and retries over (instance-wide, so that a
  // target shared by two routes has one window).
  Millis budget_window{10000};
};

// `routing:` (the retry and circuit-breaker defaults, the retry budgets' window). Throws
// ConfigError.
RoutingSettings load_routing(const YamlField& field);
// A `retry:` block over `base` (fields not given keep base's values): `routing.retry` over the
// built-in defaults, a route's over `routing.retry`.
RetrySettings load_retry(const YamlField& field, RetrySettings base);

}  // namespace sluice::config
