#pragma once

#include <memory>
#include <optional>
#include <string>

#include "codec/sse.h"
#include "core/error.h"
#include "server/request_context.h"

namespace sluice::server {

// Turns an upstream's SSE events into the bytes the caller receives, in the caller's
// protocol, and keeps what metering needs. One instance per streamed request, used on the
// request's worker thread only. Implementations never do I/O: the relay loop
// (handlers.cc) reads, feeds and writes.
class StreamTransform {
 public:
  virtual ~StreamTransform() = default;

  // Appends to `out` what the caller gets for one upstream event (possibly nothing).
  // `at_end`: the event was completed by the end of the upstream body, so its raw bytes may
  // lack the terminating blank line.
  virtual void on_event(const codec::SseEvent& event, bool at_end, std::string& out) = 0;
  // The upstream ended its stream properly (OpenAI's [DONE]).
  virtual bool done() const = 0;
  // Set when the stream cannot go on: the transform already appended a terminal error event
  // to `out` and the relay stops reading.
  virtual const std::optional<Error>& failed() const = 0;
  // Appends the terminal error event for a failure outside the stream (upstream broke,
  // timed out, ended early), in the caller's protocol.
  virtual void on_failure(const Error& error, std::string& out) = 0;
  // Usage, finish reason and event count for the access log and metering.
  virtual void report(RequestContext& ctx) const = 0;
};

// OpenAI chunks relayed verbatim; the usage-only chunk is dropped when `strip_usage_chunk`
// (the gateway requested usage on the caller's behalf).
std::unique_ptr<StreamTransform> make_openai_passthrough(bool strip_usage_chunk);

// OpenAI chunks decoded to IR stream events and encoded as Anthropic Messages events.
std::unique_ptr<StreamTransform> make_openai_to_anthropic();

}  // namespace sluice::server
