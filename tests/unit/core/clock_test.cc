#include "core/clock.h"

#include <thread>

#include <gtest/gtest.h>

#include "core/function_ref.h"

namespace sluice {
namespace {

using namespace std::chrono_literals;

TEST(SimulatedClock, MovesOnlyWhenTold) {
  SimulatedClock clock;
  const auto t0 = clock.now();
  const auto w0 = clock.wall_now();
  EXPECT_EQ(clock.now(), t0);
  clock.advance(1500ms);
  EXPECT_EQ(clock.now() - t0, 1500ms);
  EXPECT_EQ(clock.wall_now() - w0, 1500ms);
  EXPECT_EQ(w0.time_since_epoch(), std::chrono::seconds(SimulatedClock::kDefaultWallSeconds));
}

TEST(SimulatedClock, WallCanJumpWithoutMovingMonotonicTime) {
  SimulatedClock clock;
  const auto t0 = clock.now();
  const auto midnight = Clock::Wall::time_point(std::chrono::seconds(1'800'057'600));
  clock.set_wall(midnight);
  EXPECT_EQ(clock.wall_now(), midnight);
  EXPECT_EQ(clock.now(), t0);
  // A window subtracted from now() stays after the epoch.
  EXPECT_GT((clock.now() - 30min).time_since_epoch().count(), 0);
}

TEST(SimulatedClock, IsSafeToAdvanceFromAnotherThread) {
  SimulatedClock clock;
  const auto t0 = clock.now();
  std::thread t([&] {
    for (int i = 0; i < 1000; ++i) {
      clock.advance(1ms);
    }
  });
  for (int i = 0; i < 1000; ++i) {
    ASSERT_GE(clock.now(), t0);
  }
  t.join();
  EXPECT_EQ(clock.now() - t0, 1000ms);
}

TEST(RealClock, IsMonotonic) {
  const Clock& clock = RealClock::instance();
  const auto a = clock.now();
  const auto b = clock.now();
  EXPECT_LE(a, b);
}

TEST(FunctionRef, CallsTheReferencedCallable) {
  int sum = 0;
  auto add = [&](int v) { sum += v; };
  FunctionRef<void(int)> ref = add;
  ref(2);
  ref(3);
  EXPECT_EQ(sum, 5);
}

}  // namespace
}  // namespace sluice
