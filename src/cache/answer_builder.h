#pragma once

#include <cstddef>
#include <optional>
#include <vector>

#include "ir/response.h"
#include "ir/stream_event.h"

namespace sluice::cache {

// Gathers the stream events of one answer (ir/stream_event.h order) into the whole answer:
// deltas joined into their parts, tool-call fragments into their calls, in order of first
// appearance. Used to read a caller's stream back for the cache, and by a follower of a
// shared call that wants a plain answer.
class AnswerBuilder {
 public:
  void add(const ir::StreamEvent& event);
  // kDone arrived (and no kError before it).
  bool done() const { return done_ && !failed_; }
  // A kError arrived, or the events broke the ordering contract.
  bool failed() const { return failed_; }
  // The answer, once done() with a finish reason; nullopt otherwise. Leaves the builder empty.
  std::optional<ir::Response> take();

 private:
  ir::ContentPart& part_of_kind(ir::PartKind kind);

  ir::Response answer_;
  std::vector<std::size_t> tool_parts_;  // tool call index -> its part in answer_.content
  bool done_ = false;
  bool failed_ = false;
};

}  // namespace sluice::cache
