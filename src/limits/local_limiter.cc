#include "limits/local_limiter.h"

#include <algorithm>
#include <limits>

namespace sluice::limits {

namespace {

using std::chrono::nanoseconds;

constexpr std::int64_t kWindowNs = 60'000'000'000;  // every bucket holds one minute of its rate

std::int64_t ns_of(Limiter::Clock::time_point t) {
  return std::chrono::duration_cast<nanoseconds>(t.time_since_epoch()).count();
}

// Nanoseconds one unit moves the arrival time: 60 s / limit, at least 1.
std::int64_t interval_ns(std::uint64_t limit) {
  return std::max<std::int64_t>(1, kWindowNs / static_cast<std::int64_t>(limit));
}

std::chrono::milliseconds ceil_ms(std::int64_t ns) {
  return std::chrono::milliseconds((std::max<std::int64_t>(ns, 0) + 999'999) / 1'000'000);
}

// The figures of a token bucket whose arrival time is `tat`.
Figures figures_of(const Bucket& b, std::int64_t tat, std::int64_t now) {
  const std::int64_t t = interval_ns(b.limit);
  const std::int64_t used = std::max<std::int64_t>(tat - now, 0);
  const std::int64_t free = std::max<std::int64_t>(kWindowNs - used, 0);
  return Figures{b.limit, std::min<std::uint64_t>(b.limit, static_cast<std::uint64_t>(free / t)),
                 ceil_ms(used)};
}

void tighten(Figures& into, const Figures& candidate) {
  if (into.limit == 0 || candidate.remaining < into.remaining) {
    into = candidate;
  }
}

}  // namespace

LocalState* LocalLimiter::state(const std::string& id) {
  std::lock_guard lock(mu_);
  auto& slot = states_[id];
  if (!slot) {
    slot = std::make_unique<LocalState>();
  }
  return slot.get();
}

Decision LocalLimiter::decide(std::span<const Charge> charges, Clock::time_point now_tp,
                              Lease& lease) {
  const std::int64_t now = ns_of(now_tp);
  Decision d;
  std::size_t taken = 0;
  for (; taken < charges.size(); ++taken) {
    const Charge& c = charges[taken];
    const Bucket& b = *c.bucket;
    std::atomic<std::int64_t>& value = b.local->value;
    if (b.dimension == Dimension::kConcurrency) {
      if (value.fetch_add(1, std::memory_order_acq_rel) >= static_cast<std::int64_t>(b.limit)) {
        value.fetch_sub(1, std::memory_order_acq_rel);
        d.status = Decision::Status::kOverLimit;
        d.limited = &b;
        d.retry_after = std::chrono::milliseconds(1000);
        break;
      }
      continue;
    }
    const std::int64_t t = interval_ns(b.limit);
    const std::int64_t cost = std::max<std::int64_t>(c.cost, 0);
    if (cost > static_cast<std::int64_t>(b.limit)) {
      d.status = Decision::Status::kOverLimit;
      d.limited = &b;
      d.never = true;
      d.retry_after = ceil_ms(kWindowNs);
      break;
    }
    std::int64_t tat = value.load(std::memory_order_relaxed);
    bool refused = false;
    for (;;) {
      const std::int64_t next = std::max(tat, now) + cost * t;
      if (next - now > kWindowNs) {
        refused = true;
        d.retry_after = ceil_ms(next - now - kWindowNs);
        tighten(b.dimension == Dimension::kTokens ? d.tokens : d.requests, figures_of(b, tat, now));
        break;
      }
      if (value.compare_exchange_weak(tat, next, std::memory_order_acq_rel,
                                      std::memory_order_relaxed)) {
        tighten(b.dimension == Dimension::kTokens ? d.tokens : d.requests,
                figures_of(b, next, now));
        break;
      }
    }
    if (refused) {
      d.status = Decision::Status::kOverLimit;
      d.limited = &b;
      break;
    }
  }
  if (d.status == Decision::Status::kOk) {
    for (const Charge& c : charges) {
      if (c.bucket->dimension == Dimension::kConcurrency) {
        lease.slots.push_back(c.bucket);
      }
    }
    return d;
  }
  // All or none: give back what the buckets before the refusing one took.
  for (std::size_t i = 0; i < taken; ++i) {
    const Bucket& b = *charges[i].bucket;
    if (b.dimension == Dimension::kConcurrency) {
      b.local->value.fetch_sub(1, std::memory_order_acq_rel);
    } else {
      b.local->value.fetch_sub(std::max<std::int64_t>(charges[i].cost, 0) * interval_ns(b.limit),
                               std::memory_order_acq_rel);
    }
  }
  return d;
}

boost::asio::awaitable<Decision> LocalLimiter::check(std::span<const Charge> charges,
                                                     Clock::time_point now,
                                                     Clock::time_point /*deadline*/, Lease& lease) {
  co_return decide(charges, now, lease);
}

void LocalLimiter::correct(std::span<const Charge> charges, Clock::time_point now_tp) {
  const std::int64_t now = ns_of(now_tp);
  for (const Charge& c : charges) {
    const Bucket& b = *c.bucket;
    if (b.dimension == Dimension::kConcurrency || c.cost == 0) {
      continue;
    }
    const std::int64_t t = interval_ns(b.limit);
    std::atomic<std::int64_t>& value = b.local->value;
    std::int64_t tat = value.load(std::memory_order_relaxed);
    // Usage beyond the estimate is owed (the bucket may run up to one more minute into debt);
    // an estimate above usage is given back, never beyond a full bucket.
    std::int64_t next = 0;
    do {
      next = std::clamp(std::max(tat, now) + c.cost * t, now, now + 2 * kWindowNs);
    } while (!value.compare_exchange_weak(tat, next, std::memory_order_acq_rel,
                                          std::memory_order_relaxed));
  }
}

void LocalLimiter::release(Lease& lease) {
  for (const Bucket* b : lease.slots) {
    b->local->value.fetch_sub(1, std::memory_order_acq_rel);
  }
  lease.slots.clear();
}

}  // namespace sluice::limits
