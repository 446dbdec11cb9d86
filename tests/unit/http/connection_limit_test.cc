#include "http/connection_limit.h"

#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace sluice::http {
namespace {

TEST(ConnectionLimit, NeverGrantsMoreThanItsMax) {
  ConnectionLimit limit(2);
  EXPECT_TRUE(limit.try_acquire());
  EXPECT_TRUE(limit.try_acquire());
  EXPECT_FALSE(limit.try_acquire());
  limit.release();
  EXPECT_TRUE(limit.try_acquire());
  EXPECT_EQ(limit.open(), 2u);
}

TEST(ConnectionLimit, AReloadChangesTheMaxForWhatIsOpenedNext) {
  ConnectionLimit limit(1);
  EXPECT_TRUE(limit.try_acquire());
  limit.set_max(3);
  EXPECT_TRUE(limit.try_acquire());
  EXPECT_TRUE(limit.try_acquire());
  EXPECT_FALSE(limit.try_acquire());
  limit.set_max(1);
  EXPECT_FALSE(limit.try_acquire()) << "three open, max one: nothing more until they close";
}

// Workers acquire and release concurrently: the cap holds at every moment and the count
// returns to zero.
TEST(ConnectionLimit, HoldsUnderConcurrentWorkers) {
  constexpr std::uint32_t kMax = 8;
  ConnectionLimit limit(kMax);
  std::atomic<std::uint32_t> held{0};
  std::atomic<std::uint32_t> peak{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 20000; ++i) {
        if (limit.try_acquire()) {
          const std::uint32_t now = held.fetch_add(1) + 1;
          std::uint32_t p = peak.load();
          while (now > p && !peak.compare_exchange_weak(p, now)) {
          }
          held.fetch_sub(1);
          limit.release();
        }
      }
    });
  }
  for (auto& t : threads) {
    t.join();
  }
  EXPECT_LE(peak.load(), kMax);
  EXPECT_EQ(limit.open(), 0u);
}

}  // namespace
}  // namespace sluice::http
