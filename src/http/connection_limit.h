#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <vector>

namespace sluice::http {

class UpstreamPool;

// The instance-wide cap on open connections to one provider, shared by every worker's pool for
// that provider: a busy worker may open what the others leave unused, and the total never
// exceeds the configured max_connections.
//
// try_acquire() and release() are lock-free on the common path (an atomic counter). Only when a
// pool is waiting for a slot does release() take the mutex to wake it (a post to the waiting
// pool's worker). A waiting pool also asks the other pools to close one idle connection each,
// so idle keep-alive connections on a quiet worker never starve a busy one.
//
// Thread-safe. Lives as long as any pool for the provider (shared_ptr), across config reloads.
class ConnectionLimit {
 public:
  explicit ConnectionLimit(std::uint32_t max) : max_(max) {}

  void set_max(std::uint32_t max) { max_.store(max, std::memory_order_relaxed); }
  std::uint32_t max() const { return max_.load(std::memory_order_relaxed); }
  std::uint32_t open() const { return open_.load(std::memory_order_relaxed); }
  // Idle connections in every pool for the provider (metrics; takes the mutex).
  std::uint32_t idle() const;

  // Reserves a slot for a new connection; false when the instance is at its cap.
  bool try_acquire();
  // A connection closed: frees its slot and wakes one waiting pool, if any.
  void release();

  // Pools register at creation so they can be asked to give up idle connections.
  void add_pool(const std::shared_ptr<UpstreamPool>& pool);
  // `pool` has requests waiting for a slot: it is woken (on its own worker) when one frees up,
  // and every other pool with idle connections is asked to close one.
  void wait_for_slot(const std::shared_ptr<UpstreamPool>& pool);

 private:
  void wake_one_waiting();

  std::atomic<std::uint32_t> max_;
  std::atomic<std::uint32_t> open_{0};
  std::atomic<std::uint32_t> waiting_count_{0};
  mutable std::mutex mu_;
  std::deque<std::weak_ptr<UpstreamPool>> waiting_;
  std::vector<std::weak_ptr<UpstreamPool>> pools_;
};

}  // namespace sluice::http
