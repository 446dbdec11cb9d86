#include "observability/span_buffer.h"

#include <algorithm>

namespace sluice::observability {

SpanBuffer::SpanBuffer(std::size_t workers, std::size_t capacity)
    : per_queue_(std::max<std::size_t>(1, capacity / std::max<std::size_t>(1, workers))) {
  for (std::size_t i = 0; i < std::max<std::size_t>(1, workers); ++i) {
    queues_.push_back(std::make_unique<Queue>());
  }
}

void SpanBuffer::push(std::size_t worker, std::string span) {
  Queue& q = *queues_[worker % queues_.size()];
  std::lock_guard lock(q.mu);
  if (q.spans.size() >= per_queue_) {
    ++q.dropped;
    return;
  }
  q.spans.push_back(std::move(span));
}

std::size_t SpanBuffer::take(std::vector<std::string>& out, std::size_t max) {
  std::size_t taken = 0;
  for (std::size_t i = 0; i < queues_.size() && taken < max; ++i) {
    Queue& q = *queues_[(next_ + i) % queues_.size()];
    std::lock_guard lock(q.mu);
    while (!q.spans.empty() && taken < max) {
      out.push_back(std::move(q.spans.front()));
      q.spans.pop_front();
      ++taken;
    }
  }
  next_ = (next_ + 1) % queues_.size();
  return taken;
}

std::size_t SpanBuffer::pending() const {
  std::size_t n = 0;
  for (const auto& q : queues_) {
    std::lock_guard lock(q->mu);
    n += q->spans.size();
  }
  return n;
}

std::uint64_t SpanBuffer::dropped() const {
  std::uint64_t n = 0;
  for (const auto& q : queues_) {
    std::lock_guard lock(q->mu);
    n += q->dropped;
  }
  return n;
}

}  // namespace sluice::observability
