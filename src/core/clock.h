#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>

namespace sluice {

// The time source of every time-driven policy: circuit breakers, retry budgets, rate limiters,
// price windows, request timings. Code that decides something from the time takes a
// `const Clock&` instead of calling std::chrono clocks, so its tests run on SimulatedClock and
// never sleep. Waiting itself (Asio timers) stays on real time; only decisions read the Clock.
//
// Both implementations are safe to read from any thread.
class Clock {
 public:
  using Monotonic = std::chrono::steady_clock;
  using Wall = std::chrono::system_clock;

  virtual ~Clock() = default;
  // Monotonic time: durations, deadlines, sliding windows.
  virtual Monotonic::time_point now() const = 0;
  // Calendar time: windows that follow the calendar (price versions, monthly budgets, logs).
  virtual Wall::time_point wall_now() const = 0;
};

// The real clocks.
class RealClock final : public Clock {
 public:
  Monotonic::time_point now() const override { return Monotonic::now(); }
  Wall::time_point wall_now() const override { return Wall::now(); }

  // A process-wide instance (stateless; any thread).
  static const RealClock& instance();
};

// A clock that moves only when told to. The monotonic reading starts at an arbitrary fixed
// point; the calendar reading starts at `wall_start`. advance() moves both by the same amount;
// set_wall() moves only the calendar (a test crossing midnight or a price change without
// waiting). Readers and writers may be on different threads.
class SimulatedClock final : public Clock {
 public:
  // 2027-01-15T08:00:00Z: a fixed, unremarkable weekday morning.
  static constexpr std::int64_t kDefaultWallSeconds = 1'800'000'000;

  explicit SimulatedClock(
      Wall::time_point wall_start = Wall::time_point(std::chrono::seconds(kDefaultWallSeconds)));

  Monotonic::time_point now() const override;
  Wall::time_point wall_now() const override;

  void advance(std::chrono::nanoseconds by);
  void set_wall(Wall::time_point to);

 private:
  std::atomic<std::int64_t> monotonic_ns_;
  std::atomic<std::int64_t> wall_ns_;
};

}  // namespace sluice
