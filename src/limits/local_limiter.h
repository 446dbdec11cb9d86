#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "limits/limiter.h"

namespace sluice::limits {

// One bucket's state on this instance: for token buckets the GCRA "theoretical arrival time"
// (ns on the steady clock; a bucket is full when it is in the past), for slots the count held.
// Lock-free: every worker updates it with compare-and-swap.
class LocalState {
 public:
  std::atomic<std::int64_t> value{0};
};

// Limits enforced in this process, shared by every worker, with no lock and no I/O on the
// request path: each token bucket is one atomic (GCRA: a request of cost c at rate r/min moves
// the arrival time by c * 60 s / r; it fits while that stays within one minute of now, which is
// a bucket of r tokens refilling continuously), each slot bucket one atomic counter.
// check() always completes inline. Thread-safe.
class LocalLimiter final : public Limiter {
 public:
  // The state of the bucket named `id` ("tpm:group:research"), created on first use and kept
  // for the limiter's life, so buckets that exist before and after a config reload keep their
  // level. Config compilation only (takes a mutex); any thread.
  LocalState* state(const std::string& id);

  boost::asio::awaitable<Decision> check(std::span<const Charge> charges, Clock::time_point now,
                                         Clock::time_point deadline, Lease& lease) override;
  void correct(std::span<const Charge> charges, Clock::time_point now) override;
  void release(Lease& lease) override;

  // The decision itself, without a coroutine (the Redis limiter uses it for instance slots,
  // tests and benchmarks call it directly).
  Decision decide(std::span<const Charge> charges, Clock::time_point now, Lease& lease);

 private:
  std::mutex mu_;
  std::unordered_map<std::string, std::unique_ptr<LocalState>> states_;
};

}  // namespace sluice::limits
