#include "pipeline/affinity.h"

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "core/clock.h"

namespace sluice::pipeline {
namespace {

using std::chrono::seconds;

TEST(ResponseAffinity, RemembersTheProviderAndTheKey) {
  SimulatedClock clock;
  ResponseAffinity store;
  store.remember("resp_1", "openai", "team-a", clock.now());
  auto found = store.find("resp_1", clock.now());
  ASSERT_TRUE(found);
  EXPECT_EQ(found->provider, "openai");
  EXPECT_EQ(found->owner, "team-a");
  EXPECT_FALSE(store.find("resp_2", clock.now()));
  store.remember("", "openai", "team-a", clock.now());
  EXPECT_EQ(store.size(), 1u);
}

TEST(ResponseAffinity, RecordsExpireAfterTheTtl) {
  SimulatedClock clock;
  ResponseAffinity store;  // one hour by default
  EXPECT_EQ(store.options().ttl, seconds(3600));
  store.remember("resp_1", "openai", "", clock.now());
  clock.advance(seconds(3599));
  EXPECT_TRUE(store.find("resp_1", clock.now()));
  clock.advance(seconds(1));
  EXPECT_FALSE(store.find("resp_1", clock.now()));
  // The expired record leaves when its shard is written next.
  for (int i = 0; i < 64; ++i) {
    store.remember("resp_new_" + std::to_string(i), "openai", "", clock.now());
  }
  EXPECT_EQ(store.size(), 64u);
}

TEST(ResponseAffinity, RememberingAgainRefreshesTheRecord) {
  SimulatedClock clock;
  ResponseAffinity store({.ttl = seconds(10), .capacity = 1000});
  store.remember("resp_1", "a", "", clock.now());
  clock.advance(seconds(8));
  store.remember("resp_1", "b", "", clock.now());
  clock.advance(seconds(8));  // past the first expiry, before the second
  for (int i = 0; i < 200; ++i) {
    store.remember("other_" + std::to_string(i), "a", "", clock.now());  // runs eviction
  }
  auto found = store.find("resp_1", clock.now());
  ASSERT_TRUE(found);
  EXPECT_EQ(found->provider, "b");
  clock.advance(seconds(2));
  EXPECT_FALSE(store.find("resp_1", clock.now()));
}

TEST(ResponseAffinity, CapacityIsBounded) {
  SimulatedClock clock;
  ResponseAffinity store({.ttl = seconds(3600), .capacity = 160});
  for (int i = 0; i < 10'000; ++i) {
    store.remember("resp_" + std::to_string(i), "p", "", clock.now());
    clock.advance(std::chrono::milliseconds(1));
  }
  EXPECT_LE(store.size(), 160u);
  EXPECT_GE(store.size(), 100u);
  // The newest are kept, the oldest went first.
  EXPECT_TRUE(store.find("resp_9999", clock.now()));
  EXPECT_FALSE(store.find("resp_0", clock.now()));
}

TEST(ResponseAffinity, WorkersShareItSafely) {
  SimulatedClock clock;
  // Room for every record: a thread preempted between remember and find must not find its
  // record evicted by the others (eviction itself: CapacityIsBounded).
  ResponseAffinity store({.ttl = seconds(3600), .capacity = 1'000'000});
  std::atomic<int> found{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      const std::string provider = std::string("p").append(std::to_string(t));
      for (int i = 0; i < 5000; ++i) {
        const std::string suffix = std::string("_").append(std::to_string(i));
        const std::string id = std::string("resp_").append(std::to_string(t)).append(suffix);
        store.remember(id, provider, "", clock.now());
        if (auto r = store.find(id, clock.now()); r && r->provider == provider) {
          ++found;
        }
        const std::string other =
            std::string("resp_").append(std::to_string((t + 1) % 4)).append(suffix);
        (void)store.find(other, clock.now());
      }
    });
  }
  for (auto& th : threads) {
    th.join();
  }
  EXPECT_EQ(found.load(), 4 * 5000);
  EXPECT_EQ(store.size(), 4u * 5000);
}

}  // namespace
}  // namespace sluice::pipeline
