#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "codec/eventstream.h"
#include "codec/sse.h"

namespace sluice::codec {

// An upstream's stream body as a sequence of events, whichever framing it comes in, so the
// relay and the protocols' stream decoders read every upstream the same way:
//
// - kSse (text/event-stream): SseParser's blocks, as they are.
// - kEventStream (application/vnd.amazon.eventstream: Bedrock's ConverseStream and
//   InvokeModelWithResponseStream): each message as one event, `data` its payload and `raw` its
//   bytes. `event` names it: its `:event-type` ("contentBlockDelta"); for an exception its
//   `:exception-type` ("throttlingException": every modeled exception's name ends in
//   "Exception"); for an unmodeled error (`:message-type` error) "error", with `data` its
//   `:error-message` and `id` its `:error-code`. A `chunk` event (InvokeModelWithResponseStream:
//   {"bytes":"<base64>"}, the model's own event) is unwrapped: `data` the decoded JSON,
//   `event` its "type" member ("content_block_delta"), `raw` the same event as an SSE block
//   ("event: <type>\ndata: <json>\n\n"); bytes that are not base64 are kMalformed.
//
// Sans-I/O, single-threaded. Views in the event are valid until the next feed(), next() or
// finish() call; fed bytes must stay alive until next() returns something other than kEvent
// (the event stream decoder borrows them).
class UpstreamEvents {
 public:
  enum class Framing : std::uint8_t { kSse, kEventStream };
  enum class Status : std::uint8_t {
    kEvent,
    kNeedMore,
    kTooLarge,   // an event above max_event_bytes: the stream must be abandoned
    kMalformed,  // framing that is not valid (a CRC mismatch...): malformed() says how
  };

  explicit UpstreamEvents(std::size_t max_event_bytes) : max_event_bytes_(max_event_bytes) {}

  // The framing of `content_type` (the upstream response's Content-Type): the event stream's
  // media type, else SSE.
  static Framing framing_of(std::string_view content_type);
  // Whether a response of `content_type` is a stream in either framing (text/event-stream, or
  // the event stream's media type); anything else is a complete body.
  static bool is_stream(std::string_view content_type);
  // Before the first feed.
  void set_framing(Framing framing);
  Framing framing() const { return framing_; }

  void feed(std::string_view bytes);
  Status next(SseEvent& out);
  // End of input: a last SSE block without its blank line is dispatched (at most once); an
  // event stream cut inside a message is kMalformed.
  Status finish(SseEvent& out);
  // What was malformed, for the error message.
  std::string_view malformed() const;

 private:
  Status from_message(const EventStreamMessage& message, SseEvent& out);
  Status unwrap_chunk(std::string_view payload, SseEvent& out);

  const std::size_t max_event_bytes_;
  Framing framing_ = Framing::kSse;
  SseParser sse_{max_event_bytes_};
  std::optional<EventStreamDecoder> aws_;
  // The last unwrapped chunk (its views are these).
  std::string chunk_data_;
  std::string chunk_type_;
  std::string chunk_raw_;
  bool malformed_chunk_ = false;
};

}  // namespace sluice::codec
