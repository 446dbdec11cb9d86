#include "routing/health.h"

#include <algorithm>

namespace sluice::routing {

namespace {

std::int64_t ns_of(TimePoint t) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
}

std::int64_t bucket_ns(const config::BreakerSettings& settings, std::size_t buckets) {
  const auto window =
      std::chrono::duration_cast<std::chrono::nanoseconds>(settings.window).count();
  return std::max<std::int64_t>(1, window / static_cast<std::int64_t>(buckets));
}

}  // namespace

void RetryBudget::deposit(double ratio, std::uint32_t burst) {
  const auto add = static_cast<std::int64_t>(ratio * 1000.0);
  const std::int64_t cap = std::int64_t{burst} * 1000;
  std::int64_t cur = milli_.load(std::memory_order_relaxed);
  while (cur < cap) {
    const std::int64_t next = cur == kUnset ? cap : std::min(cap, cur + add);
    if (milli_.compare_exchange_weak(cur, next, std::memory_order_relaxed)) {
      return;
    }
  }
}

bool RetryBudget::try_spend() {
  std::int64_t cur = milli_.load(std::memory_order_relaxed);
  while (cur >= 1000) {
    if (milli_.compare_exchange_weak(cur, cur - 1000, std::memory_order_relaxed)) {
      return true;
    }
  }
  return false;
}

void RetryBudget::refund() { milli_.fetch_add(1000, std::memory_order_relaxed); }

bool Breaker::available(TimePoint now) const {
  switch (state()) {
    case State::kClosed:
      return true;
    case State::kOpen:
      return ns_of(now) >= open_until_ns_.load(std::memory_order_acquire);
    case State::kHalfOpen:
      // The probe is out; a probe that never reported (its caller went away) expires.
      return ns_of(now) - probe_started_ns_.load(std::memory_order_acquire) >=
             open_ns_.load(std::memory_order_relaxed);
  }
  return true;
}

void Breaker::on_attempt(TimePoint now) {
  const std::int64_t t = ns_of(now);
  std::uint8_t s = state_.load(std::memory_order_acquire);
  if (s == static_cast<std::uint8_t>(State::kOpen) &&
      t >= open_until_ns_.load(std::memory_order_acquire)) {
    if (state_.compare_exchange_strong(s, static_cast<std::uint8_t>(State::kHalfOpen))) {
      probe_started_ns_.store(t, std::memory_order_release);
    }
  } else if (s == static_cast<std::uint8_t>(State::kHalfOpen) && available(now)) {
    probe_started_ns_.store(t, std::memory_order_release);  // a new probe replaces a lost one
  }
}

void Breaker::open(TimePoint now, const config::BreakerSettings& settings) {
  const auto open_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(settings.open).count();
  open_ns_.store(open_ns, std::memory_order_relaxed);
  open_until_ns_.store(ns_of(now) + open_ns, std::memory_order_release);
  if (state_.exchange(static_cast<std::uint8_t>(State::kOpen)) !=
      static_cast<std::uint8_t>(State::kOpen)) {
    opened_.fetch_add(1, std::memory_order_relaxed);
  }
}

void Breaker::record(TimePoint now, bool failure, const config::BreakerSettings& settings) {
  if (!settings.enabled) {
    return;
  }
  const State s = state();
  if (s != State::kClosed) {
    // Any answer while open or half-open decides: a success closes the breaker with a fresh
    // window, a failure keeps it open for another period.
    if (failure) {
      open(now, settings);
    } else {
      for (Bucket& b : buckets_) {
        b.epoch.store(-1, std::memory_order_relaxed);
      }
      state_.store(static_cast<std::uint8_t>(State::kClosed), std::memory_order_release);
    }
    return;
  }
  const std::int64_t width = bucket_ns(settings, kBuckets);
  const std::int64_t epoch = ns_of(now) / width;
  Bucket& b = buckets_[static_cast<std::size_t>(epoch) % kBuckets];
  std::int64_t seen = b.epoch.load(std::memory_order_acquire);
  if (seen != epoch && b.epoch.compare_exchange_strong(seen, epoch)) {
    // This thread turned the bucket over; counts racing with the reset may be lost, which a
    // failure rate tolerates.
    b.total.store(0, std::memory_order_relaxed);
    b.failures.store(0, std::memory_order_relaxed);
  }
  b.total.fetch_add(1, std::memory_order_relaxed);
  if (failure) {
    b.failures.fetch_add(1, std::memory_order_relaxed);
    const auto [total, failures] = window(now, settings);
    if (total >= settings.min_requests &&
        static_cast<double>(failures) >= settings.error_rate * static_cast<double>(total)) {
      open(now, settings);
    }
  }
}

std::pair<std::uint32_t, std::uint32_t> Breaker::window(
    TimePoint now, const config::BreakerSettings& settings) const {
  const std::int64_t width = bucket_ns(settings, kBuckets);
  const std::int64_t epoch = ns_of(now) / width;
  std::uint32_t total = 0;
  std::uint32_t failures = 0;
  for (const Bucket& b : buckets_) {
    const std::int64_t e = b.epoch.load(std::memory_order_acquire);
    if (e >= 0 && e <= epoch && epoch - e < static_cast<std::int64_t>(kBuckets)) {
      total += b.total.load(std::memory_order_relaxed);
      failures += b.failures.load(std::memory_order_relaxed);
    }
  }
  return {total, failures};
}

std::string_view to_string(Breaker::State state) {
  switch (state) {
    case Breaker::State::kClosed:
      return "closed";
    case Breaker::State::kOpen:
      return "open";
    case Breaker::State::kHalfOpen:
      return "half_open";
  }
  return "closed";
}

void TargetHealth::observe_ttfb(std::chrono::microseconds sample) {
  // alpha = 1/8: a few slow answers move it, one does not.
  const std::int64_t s = sample.count();
  std::int64_t cur = ttfb_ewma_us.load(std::memory_order_relaxed);
  for (;;) {
    const std::int64_t next = cur < 0 ? s : cur + (s - cur) / 8;
    if (ttfb_ewma_us.compare_exchange_weak(cur, next, std::memory_order_relaxed)) {
      return;
    }
  }
}

void TargetHealth::back_off_until(TimePoint until) {
  const std::int64_t t = ns_of(until);
  std::int64_t cur = backoff_until_ns.load(std::memory_order_relaxed);
  while (cur < t && !backoff_until_ns.compare_exchange_weak(cur, t, std::memory_order_relaxed)) {
  }
}

bool TargetHealth::in_backoff(TimePoint now) const {
  return ns_of(now) < backoff_until_ns.load(std::memory_order_relaxed);
}

TargetHealth& HealthRegistry::target(std::string_view provider, std::string_view model) {
  std::string key;
  key.reserve(provider.size() + model.size() + 1);
  key.append(provider).push_back('\n');
  key.append(model);
  std::lock_guard lock(mutex_);
  auto& slot = targets_[key];
  if (!slot) {
    slot = std::make_unique<TargetHealth>();
    slot->provider.assign(provider);
    slot->model.assign(model);
  }
  return *slot;
}

void HealthRegistry::for_each(const std::function<void(const TargetHealth&)>& fn) const {
  std::lock_guard lock(mutex_);
  for (const auto& [key, health] : targets_) {
    fn(*health);
  }
}

}  // namespace sluice::routing
