#include "routing/health.h"

#include <algorithm>

namespace sluice::routing {

namespace {

std::int64_t ns_of(TimePoint t) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
}

std::int64_t bucket_ns(Millis window) {
  const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(window).count();
  return std::max<std::int64_t>(1, ns / static_cast<std::int64_t>(WindowCounts::kBuckets));
}

}  // namespace

void WindowCounts::add(TimePoint now, Millis window, std::int32_t first, std::int32_t second) {
  const std::int64_t epoch = ns_of(now) / bucket_ns(window);
  Bucket& b = buckets_[static_cast<std::size_t>(epoch) % kBuckets];
  std::int64_t seen = b.epoch.load(std::memory_order_acquire);
  if (seen != epoch) {
    if (seen > epoch) {
      return;  // a late count for a bucket already reused: too old to matter
    }
    if (b.epoch.compare_exchange_strong(seen, epoch)) {
      b.first.store(0, std::memory_order_relaxed);
      b.second.store(0, std::memory_order_relaxed);
    }
  }
  if (first != 0) {
    b.first.fetch_add(first, std::memory_order_relaxed);
  }
  if (second != 0) {
    b.second.fetch_add(second, std::memory_order_relaxed);
  }
}

std::pair<std::uint32_t, std::uint32_t> WindowCounts::sums(TimePoint now, Millis window) const {
  const std::int64_t epoch = ns_of(now) / bucket_ns(window);
  std::int64_t first = 0;
  std::int64_t second = 0;
  for (const Bucket& b : buckets_) {
    const std::int64_t e = b.epoch.load(std::memory_order_acquire);
    if (e >= 0 && e <= epoch && epoch - e < static_cast<std::int64_t>(kBuckets)) {
      first += b.first.load(std::memory_order_relaxed);
      second += b.second.load(std::memory_order_relaxed);
    }
  }
  return {static_cast<std::uint32_t>(std::max<std::int64_t>(0, first)),
          static_cast<std::uint32_t>(std::max<std::int64_t>(0, second))};
}

void WindowCounts::clear() {
  for (Bucket& b : buckets_) {
    b.epoch.store(-1, std::memory_order_relaxed);
  }
}

bool RetryBudget::try_spend(TimePoint now, Millis window, double ratio, std::uint32_t burst) {
  const auto [requests, retries] = counts_.sums(now, window);
  if (static_cast<double>(retries) + 1.0 > ratio * static_cast<double>(requests) + burst) {
    return false;
  }
  counts_.add(now, window, 0, 1);
  return true;
}

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
      counts_.clear();
      state_.store(static_cast<std::uint8_t>(State::kClosed), std::memory_order_release);
    }
    return;
  }
  counts_.add(now, settings.window, 1, failure ? 1 : 0);
  if (failure) {
    const auto [total, failures] = window(now, settings);
    if (total >= settings.min_requests &&
        static_cast<double>(failures) >= settings.error_rate * static_cast<double>(total)) {
      open(now, settings);
    }
  }
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
