// Circuit breaker, retry budget and latency average on a SimulatedClock.

#include "routing/health.h"

#include <gtest/gtest.h>

namespace sluice::routing {
namespace {

using namespace std::chrono_literals;

config::BreakerSettings settings() {
  config::BreakerSettings s;
  s.error_rate = 0.5;
  s.min_requests = 10;
  s.window = 10s;
  s.open = 15s;
  return s;
}

TEST(Breaker, StaysClosedBelowMinRequestsAndBelowTheRate) {
  SimulatedClock clock;
  Breaker b;
  for (int i = 0; i < 9; ++i) {
    b.record(clock.now(), true, settings());
  }
  EXPECT_EQ(b.state(), Breaker::State::kClosed) << "9 failures < min_requests";
  for (int i = 0; i < 12; ++i) {
    b.record(clock.now(), false, settings());
  }
  EXPECT_EQ(b.state(), Breaker::State::kClosed) << "9 of 21 < 50%";
}

TEST(Breaker, OpensHalfOpensAndCloses) {
  SimulatedClock clock;
  Breaker b;
  for (int i = 0; i < 10; ++i) {
    b.record(clock.now(), i % 2 == 1, settings());
  }
  ASSERT_EQ(b.state(), Breaker::State::kOpen);
  EXPECT_EQ(b.opened_count(), 1u);
  EXPECT_FALSE(b.available(clock.now()));
  clock.advance(14s);
  EXPECT_FALSE(b.available(clock.now()));
  clock.advance(1s);
  EXPECT_TRUE(b.available(clock.now())) << "due for a probe";
  b.on_attempt(clock.now());
  EXPECT_EQ(b.state(), Breaker::State::kHalfOpen);
  EXPECT_FALSE(b.available(clock.now())) << "one probe at a time";
  b.record(clock.now(), false, settings());
  EXPECT_EQ(b.state(), Breaker::State::kClosed);
  EXPECT_EQ(b.window(clock.now(), settings()).first, 0u) << "closed with a fresh window";
}

TEST(Breaker, AFailedProbeOpensItAgain) {
  SimulatedClock clock;
  Breaker b;
  for (int i = 0; i < 10; ++i) {
    b.record(clock.now(), true, settings());
  }
  clock.advance(15s);
  b.on_attempt(clock.now());
  b.record(clock.now(), true, settings());
  EXPECT_EQ(b.state(), Breaker::State::kOpen);
  EXPECT_FALSE(b.available(clock.now() + 14s));
  EXPECT_TRUE(b.available(clock.now() + 15s));
}

TEST(Breaker, ALostProbeExpires) {
  SimulatedClock clock;
  Breaker b;
  for (int i = 0; i < 10; ++i) {
    b.record(clock.now(), true, settings());
  }
  clock.advance(15s);
  b.on_attempt(clock.now());  // its caller goes away: no record()
  EXPECT_FALSE(b.available(clock.now() + 1s));
  EXPECT_TRUE(b.available(clock.now() + 15s));
}

TEST(Breaker, OldFailuresLeaveTheWindow) {
  SimulatedClock clock;
  Breaker b;
  for (int i = 0; i < 9; ++i) {
    b.record(clock.now(), true, settings());
  }
  clock.advance(11s);
  b.record(clock.now(), true, settings());
  EXPECT_EQ(b.state(), Breaker::State::kClosed) << "the 9 earlier ones are out of the window";
  EXPECT_EQ(b.window(clock.now(), settings()), (std::pair<std::uint32_t, std::uint32_t>{1, 1}));
}

TEST(Breaker, DisabledNeverOpens) {
  SimulatedClock clock;
  Breaker b;
  config::BreakerSettings off = settings();
  off.enabled = false;
  for (int i = 0; i < 100; ++i) {
    b.record(clock.now(), true, off);
  }
  EXPECT_EQ(b.state(), Breaker::State::kClosed);
}

TEST(RetryBudget, RetriesStayBelowTheRatioOfRequestsInTheWindowPlusTheBurst) {
  SimulatedClock clock;
  RetryBudget budget;
  const auto window = 10s;
  EXPECT_TRUE(budget.try_spend(clock.now(), window, 0.1, 1)) << "the burst needs no traffic";
  EXPECT_FALSE(budget.try_spend(clock.now(), window, 0.1, 1));
  for (int i = 0; i < 19; ++i) {
    budget.on_request(clock.now(), window);
  }
  EXPECT_TRUE(budget.try_spend(clock.now(), window, 0.1, 1)) << "19 requests earn one retry";
  EXPECT_FALSE(budget.try_spend(clock.now(), window, 0.1, 1)) << "but not two";
  budget.on_request(clock.now(), window);
  EXPECT_TRUE(budget.try_spend(clock.now(), window, 0.1, 1)) << "the 20th earns the second";
  EXPECT_EQ(budget.window(clock.now(), window), (std::pair<std::uint32_t, std::uint32_t>{20, 3}));
  budget.refund(clock.now(), window);
  EXPECT_EQ(budget.window(clock.now(), window).second, 2u);
}

TEST(RetryBudget, RequestsAndRetriesAgeOutWithTheWindow) {
  SimulatedClock clock;
  RetryBudget budget;
  const auto window = 10s;
  for (int i = 0; i < 100; ++i) {
    budget.on_request(clock.now(), window);
  }
  int spent = 0;
  while (budget.try_spend(clock.now(), window, 0.1, 2)) {
    ++spent;
  }
  EXPECT_EQ(spent, 12);
  clock.advance(5s);
  EXPECT_FALSE(budget.try_spend(clock.now(), window, 0.1, 2)) << "still inside the window";
  clock.advance(5s);
  EXPECT_EQ(budget.window(clock.now(), window), (std::pair<std::uint32_t, std::uint32_t>{0, 0}));
  // An idle window earns nothing: only the burst is left, not the 100 requests' share.
  EXPECT_TRUE(budget.try_spend(clock.now(), window, 0.1, 2));
  EXPECT_TRUE(budget.try_spend(clock.now(), window, 0.1, 2));
  EXPECT_FALSE(budget.try_spend(clock.now(), window, 0.1, 2));
}

TEST(RetryBudget, TheWindowSlidesBucketByBucket) {
  SimulatedClock clock;
  RetryBudget budget;
  const auto window = 10s;
  for (int i = 0; i < 10; ++i) {
    budget.on_request(clock.now(), window);
    clock.advance(1s);
  }
  EXPECT_EQ(budget.window(clock.now(), window).first, 9u) << "the first second has left";
  clock.advance(4s);
  EXPECT_EQ(budget.window(clock.now(), window).first, 5u);
}

TEST(TargetHealth, LatencyAverageMovesAnEighthPerSample) {
  TargetHealth h;
  h.observe_ttfb(800us);
  EXPECT_EQ(h.ttfb_ewma_us.load(), 800);
  h.observe_ttfb(1600us);
  EXPECT_EQ(h.ttfb_ewma_us.load(), 900);
}

TEST(HealthRegistry, OneEntryPerProviderAndModel) {
  HealthRegistry r;
  TargetHealth& a = r.target("p", "m");
  EXPECT_EQ(&a, &r.target("p", "m"));
  EXPECT_NE(&a, &r.target("p", "n"));
  EXPECT_NE(&a, &r.target("pm", ""));
  int n = 0;
  r.for_each([&](const TargetHealth&) { ++n; });
  EXPECT_EQ(n, 3);
}

}  // namespace
}  // namespace sluice::routing
