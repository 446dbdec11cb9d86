#pragma once

#include <cstdint>
#include <string>

namespace sluice::mock {

// Where an event sits in a stream, for x-mock-stall-after / x-mock-disconnect-after.
enum class EventKind : std::uint8_t {
  kPrelude,  // before any counted event (the role chunk of a generated chat stream)
  kCounted,  // a content event: counts toward stall-after / disconnect-after
  kTrailer,  // after the content (finish chunk, usage chunk, [DONE])
};

// Produces the events of one streamed response lazily, so that ten thousand idle streams
// cost a few hundred bytes each rather than their whole body. Single-threaded; owned by the
// connection serving the request.
class EventSource {
 public:
  virtual ~EventSource() = default;

  // Appends the next complete event (including its terminating blank line) to `out` and
  // sets `kind`. Returns false, leaving `out` untouched, when the stream is exhausted.
  virtual bool next(std::string& out, EventKind& kind) = 0;
};

}  // namespace sluice::mock
