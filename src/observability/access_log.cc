#include "observability/access_log.h"

#include <chrono>
#include <stdexcept>

#include "core/thread_name.h"

namespace sluice::observability {

AccessLog::AccessLog(const std::string& path, std::size_t workers, std::size_t queue_capacity)
    : out_(path.empty() ? stdout : std::fopen(path.c_str(), "a")),
      owns_file_(!path.empty()),
      capacity_(queue_capacity) {
  if (out_ == nullptr) {
    throw std::runtime_error("cannot open access log file " + path);
  }
  for (std::size_t i = 0; i < workers; ++i) {
    queues_.push_back(std::make_unique<Queue>());
  }
  thread_ = std::thread([this] { run(); });
}

AccessLog::~AccessLog() {
  {
    std::lock_guard lock(wake_mu_);
    stop_ = true;
  }
  wake_.notify_all();
  thread_.join();
  drain_once();
  std::fflush(out_);
  if (owns_file_) {
    std::fclose(out_);
  }
}

void AccessLog::write(std::size_t worker, std::string_view line) {
  Queue& q = *queues_[worker % queues_.size()];
  std::lock_guard lock(q.mu);
  if (q.lines >= capacity_) {
    dropped_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  q.bytes.append(line);
  q.bytes += '\n';
  ++q.lines;
}

void AccessLog::write_now(const std::string& line) {
  std::lock_guard lock(write_mu_);
  std::fwrite(line.data(), 1, line.size(), out_);
  std::fputc('\n', out_);
  std::fflush(out_);
}

void AccessLog::flush() {
  drain_once();
  std::lock_guard lock(write_mu_);
  std::fflush(out_);
}

std::size_t AccessLog::drain_once() {
  // A buffer grown past this by a burst is let go once written instead of handed back.
  constexpr std::size_t kMaxSpareBytes = 4 << 20;
  std::size_t written = 0;
  std::lock_guard wlock(write_mu_);
  for (auto& q : queues_) {
    {
      std::lock_guard lock(q->mu);
      if (q->lines == 0) {
        continue;
      }
      q->spare.swap(q->bytes);  // the worker gets the buffer emptied at the last drain
      written += q->lines;
      q->lines = 0;
    }
    std::fwrite(q->spare.data(), 1, q->spare.size(), out_);
    q->spare.clear();
    if (q->spare.capacity() > kMaxSpareBytes) {
      std::string().swap(q->spare);
    }
  }
  if (written > 0) {
    std::fflush(out_);
  }
  return written;
}

void AccessLog::run() {
  name_this_thread("access-log");
  std::unique_lock lock(wake_mu_);
  while (!stop_) {
    lock.unlock();
    drain_once();
    lock.lock();
    // Workers do not signal (that would cost a syscall per request); the writer polls.
    wake_.wait_for(lock, std::chrono::milliseconds(20), [this] { return stop_; });
  }
}

}  // namespace sluice::observability
