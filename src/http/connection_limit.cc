#include "http/connection_limit.h"

#include <algorithm>

#include "http/upstream_pool.h"

namespace sluice::http {

bool ConnectionLimit::try_acquire() {
  std::uint32_t current = open_.load(std::memory_order_relaxed);
  for (;;) {
    if (current >= max_.load(std::memory_order_relaxed)) {
      return false;
    }
    if (open_.compare_exchange_weak(current, current + 1, std::memory_order_acq_rel,
                                    std::memory_order_relaxed)) {
      return true;
    }
  }
}

void ConnectionLimit::release() {
  open_.fetch_sub(1, std::memory_order_acq_rel);
  if (waiting_count_.load(std::memory_order_acquire) > 0) {
    wake_one_waiting();
  }
}

void ConnectionLimit::add_pool(const std::shared_ptr<UpstreamPool>& pool) {
  std::lock_guard lock(mu_);
  std::erase_if(pools_, [](const std::weak_ptr<UpstreamPool>& p) { return p.expired(); });
  pools_.push_back(pool);
}

std::uint32_t ConnectionLimit::idle() const {
  std::lock_guard lock(mu_);
  std::size_t idle = 0;
  for (const std::weak_ptr<UpstreamPool>& p : pools_) {
    if (auto pool = p.lock()) {
      idle += pool->idle_count();
    }
  }
  return static_cast<std::uint32_t>(idle);
}

void ConnectionLimit::wait_for_slot(const std::shared_ptr<UpstreamPool>& pool) {
  std::vector<std::shared_ptr<UpstreamPool>> others;
  {
    std::lock_guard lock(mu_);
    waiting_.push_back(pool);
    waiting_count_.fetch_add(1, std::memory_order_acq_rel);
    for (const auto& weak : pools_) {
      if (auto other = weak.lock(); other && other != pool && other->idle_count() > 0) {
        others.push_back(std::move(other));
      }
    }
  }
  // A slot may have been freed between the caller's failed try_acquire and the registration.
  if (open_.load(std::memory_order_acquire) < max_.load(std::memory_order_relaxed)) {
    wake_one_waiting();
  }
  for (const auto& other : others) {
    other->post_close_one_idle();
  }
}

void ConnectionLimit::wake_one_waiting() {
  std::shared_ptr<UpstreamPool> pool;
  {
    std::lock_guard lock(mu_);
    while (!waiting_.empty() && !pool) {
      pool = waiting_.front().lock();
      waiting_.pop_front();
      waiting_count_.fetch_sub(1, std::memory_order_acq_rel);
    }
  }
  if (pool) {
    pool->post_slot_available();
  }
}

}  // namespace sluice::http
