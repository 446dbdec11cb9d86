#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace sluice::observability {

// Finished spans (each an encoded OTLP/JSON Span object, otlp_json.h) waiting for the trace
// exporter. Each worker has its own bounded queue with its own mutex, shared only with the
// exporter thread: no lock or atomic is shared between workers on the request path. A full
// queue drops the span and counts it; a worker never waits for the exporter.
class SpanBuffer {
 public:
  // `capacity` spans in all, split evenly between `workers` queues (at least one each).
  SpanBuffer(std::size_t workers, std::size_t capacity);
  SpanBuffer(const SpanBuffer&) = delete;
  SpanBuffer& operator=(const SpanBuffer&) = delete;

  // Worker `worker`'s thread: queues `span`, or drops it when that worker's queue is full.
  void push(std::size_t worker, std::string span);

  // Exporter thread: moves up to `max` queued spans (oldest first, queue by queue) to the end
  // of `out`; returns how many.
  std::size_t take(std::vector<std::string>& out, std::size_t max);
  // Any thread: spans queued now (a moment's sum over the queues).
  std::size_t pending() const;
  // Any thread: spans dropped because a queue was full, since start.
  std::uint64_t dropped() const;
  std::size_t capacity() const { return per_queue_ * queues_.size(); }

 private:
  struct Queue {
    mutable std::mutex mu;
    std::deque<std::string> spans;
    std::uint64_t dropped = 0;
  };
  std::size_t per_queue_;
  std::size_t next_ = 0;  // exporter thread only: the queue take() starts at (fairness)
  std::vector<std::unique_ptr<Queue>> queues_;
};

}  // namespace sluice::observability
