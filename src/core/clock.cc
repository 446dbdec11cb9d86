#include "core/clock.h"

namespace sluice {

const RealClock& RealClock::instance() {
  static const RealClock clock;
  return clock;
}

namespace {

std::int64_t to_ns(std::chrono::nanoseconds d) { return d.count(); }

}  // namespace

SimulatedClock::SimulatedClock(Wall::time_point wall_start)
    // One hour in: code that subtracts a window from now() never sees a negative epoch.
    : monotonic_ns_(to_ns(std::chrono::hours(1))),
      wall_ns_(to_ns(
          std::chrono::duration_cast<std::chrono::nanoseconds>(wall_start.time_since_epoch()))) {}

Clock::Monotonic::time_point SimulatedClock::now() const {
  return Monotonic::time_point(std::chrono::duration_cast<Monotonic::duration>(
      std::chrono::nanoseconds(monotonic_ns_.load(std::memory_order_acquire))));
}

Clock::Wall::time_point SimulatedClock::wall_now() const {
  return Wall::time_point(std::chrono::duration_cast<Wall::duration>(
      std::chrono::nanoseconds(wall_ns_.load(std::memory_order_acquire))));
}

void SimulatedClock::advance(std::chrono::nanoseconds by) {
  monotonic_ns_.fetch_add(by.count(), std::memory_order_acq_rel);
  wall_ns_.fetch_add(by.count(), std::memory_order_acq_rel);
}

void SimulatedClock::set_wall(Wall::time_point to) {
  wall_ns_.store(to_ns(std::chrono::duration_cast<std::chrono::nanoseconds>(to.time_since_epoch())),
                 std::memory_order_release);
}

}  // namespace sluice
