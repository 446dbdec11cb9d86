#include "core/thread_name.h"

#include <array>
#include <string>
#include <string_view>
#include <thread>

#include <gtest/gtest.h>
#include <pthread.h>

namespace sluice {
namespace {

std::string name_of_this_thread() {
  std::array<char, 64> buf{};
  pthread_getname_np(pthread_self(), buf.data(), buf.size());
  return buf.data();
}

// Names a new thread `name` and returns what that thread reads back as its name.
std::string name_seen_by_a_thread(std::string_view name) {
  std::string seen;
  std::thread t([&] {
    name_this_thread(name);
    seen = name_of_this_thread();
  });
  t.join();
  return seen;
}

TEST(ThreadName, NamesTheCallingThreadOnly) {
  const std::string before = name_of_this_thread();
  EXPECT_EQ(name_seen_by_a_thread("usage-writer"), "usage-writer");
  EXPECT_EQ(name_of_this_thread(), before);
}

TEST(ThreadName, LongNamesKeepTheirFirstFifteenBytes) {
  EXPECT_EQ(name_seen_by_a_thread("a-name-longer-than-the-kernel-keeps"), "a-name-longer-t");
}

}  // namespace
}  // namespace sluice
