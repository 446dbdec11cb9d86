#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "codec/sse.h"
#include "core/error.h"
#include "ir/stream_event.h"
#include "ir/usage.h"

// The three per-request stream interfaces every protocol codec implements. All are sans-I/O,
// single-threaded (one request, one worker) and hold their own state; the pipeline's relay
// loop reads upstream bytes, splits them into SSE events (codec/sse.h) and writes what these
// produce. docs/architecture.md shows where each one sits.
namespace sluice::protocol {

// Upstream side of a translated stream: the provider's events -> IR stream events, keeping the
// ordering contract of ir/stream_event.h. Nothing is dropped silently: what the IR cannot carry
// becomes a kError.
class StreamDecoder {
 public:
  virtual ~StreamDecoder() = default;
  // Appends the IR events for one SSE block to `out` (zero or more). Views in `event` are read
  // during the call only.
  virtual void on_event(const codec::SseEvent& event, std::vector<ir::StreamEvent>& out) = 0;
  // The upstream body ended. A stream that already carried its final answer (a finish reason)
  // ends cleanly (kFinish, kDone) even without its protocol terminator; one that did not gets
  // kError ("ended early"). Nothing after kDone or kError.
  virtual void on_end(std::vector<ir::StreamEvent>& out) = 0;
  // kDone or kError has been emitted.
  virtual bool finished() const = 0;
  // Schema drift so far (protocol/drift.h): distinct fields at the levels this decoder reads,
  // and event types, that it does not know. Unknown event types are skipped, not errors.
  virtual std::uint32_t unknown_fields() const { return 0; }
};

// Caller side of a translated stream: IR stream events -> the caller's protocol bytes. Text
// deltas are written as they arrive (no added first-token latency).
class StreamEncoder {
 public:
  virtual ~StreamEncoder() = default;
  // Appends the bytes for `event` to `out` (possibly none). A kError event, or an event that
  // cannot be expressed, writes the protocol's terminal error event and ends the stream.
  virtual void encode(const ir::StreamEvent& event, std::string& out) = 0;
  // The stream's terminator or its terminal error event has been written.
  virtual bool finished() const = 0;
  // The error that ended the stream, when one did.
  virtual const std::optional<Error>& error() const = 0;
  // Usage reports that could not be expressed exactly in this protocol and were clamped (e.g. an
  // upstream whose cache counts exceed its input). The caller got the clamped figures; metering
  // keeps the IR figures and counts the anomaly.
  virtual std::uint32_t usage_clamped() const { return 0; }
  // Events this protocol has no place for and that were left out by a documented rule (e.g.
  // reasoning signatures towards OpenAI Chat Completions). Reported per request, never silent.
  virtual std::uint32_t dropped_events() const { return 0; }
};

// Passthrough: watches a stream relayed verbatim (caller and upstream speak the same protocol)
// and extracts what the gateway needs without re-encoding: usage, the finish reason, the
// terminator, whether model output has started. May drop an event the gateway itself asked the
// upstream for (a usage-only chunk the caller did not request).
class StreamSniffer {
 public:
  enum class Action : std::uint8_t { kForward, kDrop };

  virtual ~StreamSniffer() = default;
  virtual Action on_event(const codec::SseEvent& event) = 0;
  // The protocol's terminator arrived ([DONE], message_stop).
  virtual bool done() const = 0;
  // A final answer arrived (a finish reason). A stream that ends after it without its
  // terminator (some OpenAI-compatible servers omit [DONE]) is complete, not truncated.
  virtual bool answered() const = 0;
  // The upstream sent an error event inside the stream.
  virtual bool saw_error() const = 0;
  // Model output (a content or tool-call delta) has been seen: the streaming commit point.
  virtual bool saw_output() const = 0;
  virtual const std::optional<ir::Usage>& usage() const = 0;
  virtual std::string_view finish_reason() const = 0;
  // Events that carried data.
  virtual std::uint64_t events() const = 0;
  // The id under which the upstream stored this answer for later retrieval (an OpenAI Responses
  // response id; IngressCodec::match_stored_object), "" when nothing was stored.
  virtual std::string_view stored_id() const { return {}; }
};

}  // namespace sluice::protocol
