#pragma once

#include <cstdint>
#include <string>

#include "core/error.h"
#include "ir/response.h"
#include "ir/usage.h"

namespace sluice::ir {

// One step of a streamed answer, protocol-neutral. A StreamDecoder turns provider events
// into these; a StreamEncoder turns them into the caller's events. Order guarantees a
// decoder gives:
//   kStart first (once), then any mix of content deltas, kUsage (possibly several times;
//   each carries the cumulative usage so far), kFinish (once), then kDone last.
//   kError may replace the rest at any point and is then the last event.
// Text and reasoning deltas have no index: one candidate, one text stream. Tool calls carry
// a zero-based `index` in order of first appearance; `id` and `name` come only in
// kToolCallStart, later argument fragments carry just the index.
enum class StreamEventKind : std::uint8_t {
  kStart,               // id, model
  kTextDelta,           // text
  kReasoningDelta,      // text
  kReasoningSignature,  // text = signature of the reasoning so far
  kRedactedReasoning,   // text = opaque data
  kToolCallStart,       // index, id, name
  kToolCallDelta,       // index, text = a fragment of the arguments JSON
  kUsage,               // usage
  kFinish,              // finish, text = stop sequence when finish == kStopSequence
  kError,               // error
  kDone,
};

struct StreamEvent {
  StreamEventKind kind = StreamEventKind::kTextDelta;
  std::uint32_t index = 0;
  std::string text;
  std::string id;
  std::string name;
  std::string model;
  FinishReason finish = FinishReason::kUnset;
  Usage usage;
  Error error;
};

}  // namespace sluice::ir
