#include "observability/access_log.h"

#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <unistd.h>

namespace sluice::observability {
namespace {

std::filesystem::path temp_log(const std::string& name) {
  auto path = std::filesystem::temp_directory_path() /
              ("sluice-access-log-" + std::to_string(::getpid()) + "-" + name);
  std::filesystem::remove(path);
  return path;
}

std::vector<std::string> read_lines(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) {
    lines.push_back(line);
  }
  return lines;
}

// Lines from several workers, written while the writer drains: each once, whole, in its
// worker's order, the buffers reused across drains.
TEST(AccessLog, EveryLineOfEveryWorkerIsWrittenOnceInItsWorkersOrder) {
  const auto path = temp_log("order");
  constexpr int kWorkers = 3;
  constexpr int kLines = 20000;
  {
    AccessLog log(path.string(), kWorkers, kLines);
    std::vector<std::thread> workers;
    for (int w = 0; w < kWorkers; ++w) {
      workers.emplace_back([&log, w] {
        for (int i = 0; i < kLines; ++i) {
          log.write(static_cast<std::size_t>(w),
                    "{\"worker\":" + std::to_string(w) + ",\"n\":" + std::to_string(i) + "}");
        }
      });
    }
    for (auto& t : workers) {
      t.join();
    }
    log.flush();
    const auto lines = read_lines(path);
    ASSERT_EQ(lines.size() + log.dropped(), std::size_t{kWorkers} * kLines);
    std::map<int, int> next;
    for (const std::string& line : lines) {
      int w = -1;
      int n = -1;
      ASSERT_EQ(std::sscanf(line.c_str(), "{\"worker\":%d,\"n\":%d}", &w, &n), 2) << line;
      EXPECT_GE(n, next[w]) << "worker " << w << " out of order";
      next[w] = n + 1;
    }
  }
  std::filesystem::remove(path);
}

// A queue holds at most its capacity: what does not fit is dropped and counted, never lost
// silently, and the next lines are written again.
TEST(AccessLog, AFullQueueDropsAndCountsTheRest) {
  const auto path = temp_log("full");
  {
    AccessLog log(path.string(), 1, 4);
    for (int i = 0; i < 1000; ++i) {
      log.write(0, "line " + std::to_string(i));
    }
    log.flush();
    const std::size_t first = read_lines(path).size();
    EXPECT_EQ(first + log.dropped(), 1000u);
    EXPECT_GT(log.dropped(), 0u);
    log.write(0, "after");
    log.flush();
    const auto lines = read_lines(path);
    ASSERT_EQ(lines.size(), first + 1);
    EXPECT_EQ(lines.back(), "after");
  }
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace sluice::observability
