#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <boost/container/small_vector.hpp>

#include "config/config.h"
#include "routing/health.h"

namespace sluice::routing {

using Millis = std::chrono::milliseconds;

// A route's policy tree as the data plane uses it, compiled once per config version: the
// config tree, each target's health and its path in the tree ("0.1": second child of the
// root's first child; "" for a single-target route).
struct CompiledPolicy {
  const config::Route* route = nullptr;
  std::vector<TargetHealth*> health;  // per Route::targets entry
  std::vector<std::string> paths;     // per Route::targets entry
  RetryBudget* instance_budget = nullptr;
  // The instance budget fills at the config-wide rate (routing.retry), whatever the route says.
  const config::RetrySettings* instance_retry = nullptr;
  const config::BreakerSettings* breaker = nullptr;
  Millis budget_window{10000};  // RoutingSettings::budget_window
  // Bounds every attempt of a request together: RetrySettings::deadline, or the longest total
  // timeout among the targets (set by whoever knows the providers' timeouts).
  Millis deadline{600000};

  // Fills health, paths and instance_budget from `registry`.
  void compile(const config::Route& r, const config::RoutingSettings& routing,
               HealthRegistry& registry);
};

// What `conditional` nodes may test about a request. The pipeline implements it over the
// request it serves; values are read only when a rule asks.
class RequestFacts {
 public:
  virtual ~RequestFacts() = default;
  virtual std::string_view key() const = 0;                  // "" when auth is off
  virtual std::string_view key_group() const { return {}; }  // "" when the key has none
  virtual std::optional<std::string_view> header(std::string_view lower_name) const = 0;
  virtual bool stream() const = 0;
  virtual std::optional<std::uint64_t> max_tokens() const = 0;
  // What prefix_affinity balances on: a hash of the request's stable prefix (the caller's
  // affinity key when it gives one, else system prompt, tools and first message), the same on
  // every instance. 0: none (the node falls back to weighted).
  virtual std::uint64_t affinity() const { return 0; }
  // What the input guardrails found (the chain's first filter ran before the plan): whether
  // `name`, a policy ("health") or one of its detectors ("health/us_ssn"), found anything; with
  // an empty name, whether any did.
  virtual bool guardrails_found(std::string_view name) const {
    (void)name;
    return false;
  }
};

// A stable 64-bit hash (FNV-1a): affinity keys must agree across instances and builds, which
// std::hash does not promise.
std::uint64_t stable_hash(std::string_view bytes, std::uint64_t seed = 0xcbf29ce484222325ull);

// Whether every test in `tests` passes for `facts`.
bool matches(std::span<const config::Condition> tests, const RequestFacts& facts);

// How an attempt failed, as far as the plan cares.
struct Failure {
  int status = 0;          // the upstream's HTTP status; 0 when none (connect, timeout, reset)
  bool retryable = false;  // Error::retryable(): a later attempt may succeed
  // What the upstream asked for (retry-after-ms, Retry-After), when it did.
  std::optional<Millis> retry_after;
};

// The order of attempts for one request, decided as it goes: the tree is ordered once (load
// balancing, health), then each failure says whether and where the next attempt goes and how
// long to wait first. Per request, one thread; reads shared health, spends shared budgets.
class AttemptPlan {
 public:
  struct Step {
    std::size_t target = 0;  // Route::targets index
    Millis wait{0};          // backoff before this attempt
  };

  // `seed` drives load balancing and jitter (a per-request random number). `facts` answers
  // conditional nodes; null takes every conditional's default.
  AttemptPlan(const CompiledPolicy& policy, TimePoint now, std::uint64_t seed,
              const RequestFacts* facts = nullptr);

  // The first attempt. Also counts the request in the retry budgets' windows.
  Step first();
  // After a failed attempt: the next one, or nullopt with stop_reason() saying why not.
  std::optional<Step> after_failure(const Failure& failure, TimePoint now);
  // Why after_failure returned nullopt ("not retryable", "retry budget exhausted", ...): a
  // string literal, so it outlives the plan.
  std::string_view stop_reason() const { return stop_reason_; }

  // The order the tree gave, as Route::targets indexes (for tests and logs).
  std::vector<std::size_t> order() const;
  std::uint32_t attempts() const { return attempts_; }
  TimePoint deadline() const { return deadline_; }

  // Full jitter: uniform in [0, min(max, base * 2^retry)).
  static Millis backoff(const config::RetrySettings& retry, std::uint32_t retry_index,
                        std::uint64_t random);

 private:
  struct Leaf {
    std::size_t target;
    std::span<const int> on_status;  // of the nearest fallback above it
  };
  // Inline room for the usual trees: a plan costs no allocation per request.
  using Leaves = boost::container::small_vector<Leaf, 4>;
  void flatten(const config::PolicyNode& node, std::span<const int> on_status, TimePoint now,
               Leaves& out);
  std::uint64_t next_random();
  // Whether any target under `node` is available (TargetHealth::available).
  bool available(const config::PolicyNode& node, TimePoint now) const;
  // The first target under `node` (a child's identity for rendezvous hashing: its provider and
  // model, not its position, so reordering the config moves nothing).
  const config::Target& first_target(const config::PolicyNode& node) const;
  // The lowest in-flight count and latency average among the targets under `node`.
  void best_load(const config::PolicyNode& node, std::int64_t& busy, std::int64_t& ttfb) const;
  // Whether failing with `failure` at leaf `i` lets the plan move past it.
  bool moves_on(std::size_t i, const Failure& failure) const;
  bool spend_retry(std::size_t target, TimePoint now);

  const CompiledPolicy& policy_;
  const config::RetrySettings& retry_;
  const RequestFacts* facts_;
  Leaves leaves_;
  std::uint64_t rng_;
  std::size_t at_ = 0;             // current leaf
  std::uint32_t at_attempts_ = 0;  // attempts made at the current leaf
  std::uint32_t attempts_ = 0;     // attempts made in total
  std::uint32_t max_attempts_ = 0;
  TimePoint deadline_{};
  TimePoint created_{};
  std::string_view stop_reason_;
};

}  // namespace sluice::routing
