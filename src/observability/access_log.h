#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace sluice::observability {

// JSON-lines access log written by a background thread, so workers never block on I/O.
// Each worker has its own bounded queue (its own mutex, shared only with the writer
// thread: no global lock on the request path). When a queue is full the line is dropped
// and counted: the request path never waits for the log. A queue is one buffer the worker
// appends its lines to; the writer swaps in the buffer it emptied last time, so no memory a
// worker allocated is freed by the writer (cross-thread frees make the worker's malloc take
// its arena's lock, and a writer preempted holding it stalls the worker).
class AccessLog {
 public:
  // `path` empty = stdout. Throws std::runtime_error if the file cannot be opened.
  AccessLog(const std::string& path, std::size_t workers, std::size_t queue_capacity = 16384);
  ~AccessLog();  // flushes everything queued, then joins the writer
  AccessLog(const AccessLog&) = delete;
  AccessLog& operator=(const AccessLog&) = delete;

  // Called on worker `worker`'s thread. `line` must not end with a newline.
  void write(std::size_t worker, std::string_view line);
  // Writes a line immediately from the calling thread (start-up messages), in order with
  // respect to lines flushed earlier.
  void write_now(const std::string& line);
  // Blocks until every line queued before the call is written.
  void flush();

  std::uint64_t dropped() const { return dropped_.load(std::memory_order_relaxed); }

 private:
  struct alignas(64) Queue {
    std::mutex mu;
    std::string bytes;      // lines, each ending in '\n'; guarded by mu
    std::size_t lines = 0;  // in bytes; guarded by mu
    std::string spare;      // the writer's: swapped in at the next drain
  };
  void run();
  std::size_t drain_once();

  std::FILE* out_;
  bool owns_file_;
  std::size_t capacity_;
  std::vector<std::unique_ptr<Queue>> queues_;
  std::atomic<std::uint64_t> dropped_{0};
  std::mutex write_mu_;  // serialises writer thread vs write_now/flush; never a worker lock
  std::mutex wake_mu_;
  std::condition_variable wake_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace sluice::observability
