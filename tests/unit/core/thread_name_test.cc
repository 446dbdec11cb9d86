#include "core/thread_name.h"

#include <array>
#include <string>
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

TEST(ThreadName, NamesTheCallingThreadOnly) {
  const std::string before = name_of_this_thread();
  std::string seen;
  std::thread t([&] {
    name_this_thread("usage-writer");
    seen = name_of_this_thread();
  });
  t.join();
  EXPECT_EQ(seen, "usage-writer");
  EXPECT_EQ(name_of_this_thread(), before);
}

TEST(ThreadName, LongNamesKeepTheirFirstFifteenBytes) {
  std::string seen;
  std::thread t([&] {
    name_this_thread("a-name-longer-than-the-kernel-keeps");
    seen = name_of_this_thread();
  });
  t.join();
  EXPECT_EQ(seen, "a-name-longer-t");
}

}  // namespace
}  // namespace sluice
