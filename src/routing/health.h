#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

#include "config/config.h"
#include "core/clock.h"

namespace sluice::routing {

using TimePoint = Clock::Monotonic::time_point;
using Millis = std::chrono::milliseconds;

// Two counts over a sliding window cut into kBuckets buckets (e.g. requests and failures).
// Lock-free; any thread. Counts racing with a bucket's turnover may be lost, which the rates
// computed from them tolerate.
class WindowCounts {
 public:
  static constexpr std::size_t kBuckets = 10;

  // Adds to the bucket `now` falls in; `window` is the whole window's length.
  void add(TimePoint now, Millis window, std::int32_t first, std::int32_t second);
  // The two sums over the window ending at `now`.
  std::pair<std::uint32_t, std::uint32_t> sums(TimePoint now, Millis window) const;
  void clear();

 private:
  struct Bucket {
    std::atomic<std::int64_t> epoch{-1};
    std::atomic<std::int32_t> first{0};
    std::atomic<std::int32_t> second{0};
  };
  std::array<Bucket, kBuckets> buckets_;
};

// Retries allowed as a fraction of requests over a sliding window: a retry is allowed while
// the retries in the window stay below ratio * requests in the window + burst. Over a storm of
// N requests within one window the retries stay below ratio * N + burst, whatever the upstream
// answers; an idle minute earns nothing, and a storm's retries age out with the window.
// Lock-free; any thread (two racing retries may both pass the last slot).
class RetryBudget {
 public:
  // A request reached its first attempt.
  void on_request(TimePoint now, Millis window) { counts_.add(now, window, 1, 0); }
  // Takes one retry; false (and nothing taken) when the budget has none left.
  bool try_spend(TimePoint now, Millis window, double ratio, std::uint32_t burst);
  // Gives back a retry taken for an attempt that was then not made.
  void refund(TimePoint now, Millis window) { counts_.add(now, window, 0, -1); }
  // Requests and retries in the window (for /readyz).
  std::pair<std::uint32_t, std::uint32_t> window(TimePoint now, Millis window) const {
    return counts_.sums(now, window);
  }

 private:
  WindowCounts counts_;
};

// A circuit breaker for one target, per instance: closed while the failure rate over a sliding
// window stays below the threshold (or too few requests were seen); open for `open` after that,
// during which the target is only tried when nothing else is left; then half-open: one probe
// request, whose success closes it and whose failure opens it again. Lock-free; any thread.
class Breaker {
 public:
  enum class State : std::uint8_t { kClosed, kOpen, kHalfOpen };

  // Whether the target should be preferred now: closed, or due for (or without) a probe. Reads
  // only.
  bool available(TimePoint now) const;
  // An attempt is about to go to the target: an open breaker past its time becomes half-open
  // and this attempt is its probe.
  void on_attempt(TimePoint now);
  // The attempt's result. `failure`: it failed in a way that says the target is unhealthy
  // (connect error, timeout, 5xx, broken stream); other outcomes are successes.
  void record(TimePoint now, bool failure, const config::BreakerSettings& settings);

  State state() const { return static_cast<State>(state_.load(std::memory_order_acquire)); }
  // Requests and failures in the current window (for /readyz).
  std::pair<std::uint32_t, std::uint32_t> window(TimePoint now,
                                                 const config::BreakerSettings& settings) const {
    return counts_.sums(now, settings.window);
  }
  std::uint64_t opened_count() const { return opened_.load(std::memory_order_relaxed); }

 private:
  void open(TimePoint now, const config::BreakerSettings& settings);

  std::atomic<std::uint8_t> state_{0};
  std::atomic<std::int64_t> open_until_ns_{0};
  std::atomic<std::int64_t> probe_started_ns_{0};
  std::atomic<std::int64_t> open_ns_{15'000'000'000};  // the last open duration (probe expiry)
  std::atomic<std::uint64_t> opened_{0};
  WindowCounts counts_;  // requests, failures
};

std::string_view to_string(Breaker::State state);

// What the gateway knows about one target (a provider and model), per instance: shared by every
// worker and every config version that names the same target, so a reload keeps its state.
struct TargetHealth {
  std::string provider;
  std::string model;
  Breaker breaker;
  RetryBudget budget;
  std::atomic<std::int32_t> in_flight{0};
  // Exponentially weighted moving average of time to first byte, microseconds; -1 = no sample.
  std::atomic<std::int64_t> ttfb_ewma_us{-1};
  // Until when the target asked to be left alone (a 429 with Retry-After): deprioritised like
  // an open breaker until then, still tried when nothing else is left.
  std::atomic<std::int64_t> backoff_until_ns{0};

  void observe_ttfb(std::chrono::microseconds sample);
  void back_off_until(TimePoint until);
  bool in_backoff(TimePoint now) const;
  // Preferred now: breaker closed (or due for a probe) and not in backoff.
  bool available(TimePoint now) const { return breaker.available(now) && !in_backoff(now); }
};

// Every TargetHealth of the instance. Entries are made when a config version is compiled (never
// on the request path) and never removed, so pointers to them stay valid for the process.
class HealthRegistry {
 public:
  TargetHealth& target(std::string_view provider, std::string_view model);
  // The instance-wide retry budget (every target's retries together).
  RetryBudget& instance_budget() { return instance_budget_; }
  void for_each(const std::function<void(const TargetHealth&)>& fn) const;

 private:
  mutable std::mutex mutex_;
  std::unordered_map<std::string, std::unique_ptr<TargetHealth>> targets_;
  RetryBudget instance_budget_;
};

}  // namespace sluice::routing
