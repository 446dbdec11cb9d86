#pragma once

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>

#include "core/result.h"
#include "core/thread_name.h"

namespace sluice {

// A value that expires, as its source gave it (an OAuth access token, temporary AWS keys).
template <class T>
struct Expiring {
  T value;
  std::chrono::system_clock::time_point expires;
};

// A credential kept fresh by its own thread, off the request path: `fetch` (blocking I/O
// allowed: a token endpoint, STS) runs once at construction and again before each value
// expires, `margin` ahead (half the value's lifetime when that is shorter); a failed fetch is
// retried after 1, 2, 4... s (at most 30 s) while the last good value keeps being served, even
// past its expiry (the upstream then refuses it and says so, which is the operator's clearest
// signal).
//
// Readers (workers, writing a request head) call current(): one atomic load, no lock. What it
// returns stays valid while this object lives and for the next kKept - 1 refreshes: a value is
// freed only when a newer one overwrites its slot of the ring, at least a few minimum
// intervals later, by which time no reader still holds it (a reader copies it into a request
// head at once). Thread-safe.
template <class T>
class Refreshed {
 public:
  using Fetch = std::function<Result<Expiring<T>>()>;

  Refreshed(std::string thread_name, Fetch fetch,
            std::chrono::seconds margin = std::chrono::minutes(5))
      : fetch_(std::move(fetch)), margin_(margin) {
    thread_ = std::thread([this, name = std::move(thread_name)] {
      name_this_thread(name);
      run();
    });
  }
  Refreshed(const Refreshed&) = delete;
  Refreshed& operator=(const Refreshed&) = delete;
  ~Refreshed() {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_all();
    thread_.join();
  }

  // The newest value, null until a fetch first succeeded.
  const T* current() const { return current_.load(std::memory_order_acquire); }

  // Waits at most `timeout` for the first fetch to end, successful or not: its error, or
  // nullopt when a value is there.
  std::optional<Error> wait_first(std::chrono::milliseconds timeout) const {
    std::unique_lock lock(mutex_);
    first_done_.wait_for(lock, timeout, [&] { return attempts_ > 0; });
    if (current() != nullptr) {
      return std::nullopt;
    }
    return last_error_ ? *last_error_
                       : Error(ErrorKind::kUpstreamTimeout, "the first fetch is still under way");
  }

  // What the last fetch failed with (nullopt when it succeeded), and how many have run.
  std::optional<Error> last_error() const {
    std::lock_guard lock(mutex_);
    return last_error_;
  }
  std::uint64_t fetches() const {
    std::lock_guard lock(mutex_);
    return attempts_;
  }

  static constexpr std::size_t kKept = 4;

 private:
  using SystemClock = std::chrono::system_clock;

  void run() {
    std::chrono::seconds backoff{1};
    std::unique_lock lock(mutex_);
    while (!stopping_) {
      lock.unlock();
      Result<Expiring<T>> fetched = fetch_();
      lock.lock();
      ++attempts_;
      SystemClock::time_point next;
      if (fetched) {
        last_error_.reset();
        backoff = std::chrono::seconds(1);
        const auto lifetime = fetched->expires - SystemClock::now();
        const auto ahead = std::min<SystemClock::duration>(margin_, lifetime / 2);
        next = fetched->expires - std::max<SystemClock::duration>(ahead, SystemClock::duration{});
        next = std::max(next, SystemClock::now() + kMinInterval);
        publish(std::move(fetched->value));
      } else {
        last_error_ = std::move(fetched).error();
        next = SystemClock::now() + backoff;
        backoff = std::min(backoff * 2, std::chrono::seconds(30));
      }
      first_done_.notify_all();
      wake_.wait_until(lock, next, [&] { return stopping_; });
    }
  }

  // Under mutex_ (the refresher thread only).
  void publish(T value) {
    slot_ = (slot_ + 1) % kKept;
    ring_[slot_] = std::make_unique<const T>(std::move(value));
    current_.store(ring_[slot_].get(), std::memory_order_release);
  }

  // How soon after a success the next fetch may run, whatever the value's lifetime says:
  // bounds how fast the ring turns over (see current()).
  static constexpr std::chrono::seconds kMinInterval{1};

  const Fetch fetch_;
  const std::chrono::seconds margin_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  mutable std::condition_variable first_done_;
  std::array<std::unique_ptr<const T>, kKept> ring_;
  std::size_t slot_ = kKept - 1;
  std::atomic<const T*> current_{nullptr};
  std::optional<Error> last_error_;
  std::uint64_t attempts_ = 0;
  bool stopping_ = false;
  std::thread thread_;  // last: started once everything above exists
};

}  // namespace sluice
