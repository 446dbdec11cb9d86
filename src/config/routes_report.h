#pragma once

#include <cstdint>
#include <string>

#include "config/config.h"

namespace sluice::config {

// What `sluice routes FILE` prints (docs/routing.md "Checking a route"): each route's compiled
// policy tree, its retry settings and the worst-case time a request can spend on it.

// The timeouts an attempt at `route.targets[target]` runs with: the target's own, else the
// route's, else its provider's (as pipeline::Snapshot compiles them). `from` is set to
// "target", "route" or "provider".
Timeouts effective_timeouts(const Config& config, const Route& route, std::size_t target,
                            const char** from = nullptr);

// The longest a request can take on a route, from the first attempt to the last byte of the
// last one, as the attempt plan (routing/plan.cc) allows it.
struct LatencyBound {
  // Attempts the plan may make: retry.max_attempts, at most one per leaf times
  // per_target_attempts (0 = that product).
  std::uint32_t max_attempts = 0;
  // The costliest sequence of at most `max_attempts` attempts the tree can produce (load
  // balancers may order their children any way, a same-target retry may be cut short by a
  // Retry-After above the cap): each attempt's total timeout, plus before each same-target
  // retry the longest wait (the backoff ceiling for that retry, or retry_after_max when
  // larger). Moving to another target waits nothing.
  Millis chain{0};
  // retry.deadline_ms, or the longest total timeout among the targets when it is 0.
  Millis deadline{0};
  bool deadline_configured = false;
  // The longest total timeout among the targets: the deadline stops new attempts, not a
  // running one, so an attempt that began just before it may run this much longer.
  Millis longest_attempt{0};
  // min(chain, deadline); just `chain` when only one attempt is allowed.
  Millis worst{0};
};

LatencyBound worst_case_latency(const Config& config, const Route& route);

// The report for every active route of `config`, then the config's notes ("note: ...").
std::string describe_routes(const Config& config);

}  // namespace sluice::config
