#include "core/refreshed.h"

#include <atomic>

#include <gtest/gtest.h>

namespace sluice {
namespace {

using std::chrono::milliseconds;
using std::chrono::system_clock;

TEST(RefreshedTest, TheFirstValueIsThereOnceFetchedAndRefreshedBeforeItExpires) {
  std::atomic<int> fetches{0};
  // Each value lives 2.2 s: the next is fetched half-way (1.1 s), not when it has expired.
  Refreshed<std::string> value("test-refresh", [&]() -> Result<Expiring<std::string>> {
    const int n = ++fetches;
    return Expiring<std::string>{.value = "v" + std::to_string(n),
                                 .expires = system_clock::now() + milliseconds(2200)};
  });
  ASSERT_EQ(value.wait_first(milliseconds(5000)), std::nullopt);
  ASSERT_NE(value.current(), nullptr);
  const std::string* first = value.current();
  EXPECT_EQ(*first, "v1");
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (value.fetches() < 2 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(milliseconds(5));  // polling, bounded by the deadline
  }
  EXPECT_GE(value.fetches(), 2u);
  EXPECT_EQ(*value.current(), "v" + std::to_string(value.fetches()));
  EXPECT_EQ(*first, "v1") << "a value a reader holds stays readable for a few refreshes";
}

TEST(RefreshedTest, AFailedFetchKeepsTheLastValueAndSaysWhy) {
  std::atomic<int> fetches{0};
  Refreshed<std::string> value("test-refresh", [&]() -> Result<Expiring<std::string>> {
    if (++fetches == 1) {
      return Expiring<std::string>{.value = "good", .expires = system_clock::now()};
    }
    return Error(ErrorKind::kUpstreamUnreachable, "token endpoint down");
  });
  ASSERT_EQ(value.wait_first(milliseconds(5000)), std::nullopt);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (value.fetches() < 2 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(milliseconds(5));  // polling, bounded by the deadline
  }
  ASSERT_GE(value.fetches(), 2u);
  EXPECT_EQ(*value.current(), "good");
  ASSERT_TRUE(value.last_error());
  EXPECT_EQ(value.last_error()->message(), "token endpoint down");
}

TEST(RefreshedTest, WaitingForAFirstValueThatNeverComesReturnsItsError) {
  Refreshed<std::string> value("test-refresh", []() -> Result<Expiring<std::string>> {
    return Error(ErrorKind::kUpstreamStatus, 400, "invalid_grant");
  });
  auto failed = value.wait_first(milliseconds(5000));
  ASSERT_TRUE(failed);
  EXPECT_EQ(failed->message(), "invalid_grant");
  EXPECT_EQ(value.current(), nullptr);
}

}  // namespace
}  // namespace sluice
