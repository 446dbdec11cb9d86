#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "codec/sse.h"
#include "core/error.h"
#include "ir/stream_event.h"
#include "pipeline/reasoning_seal.h"
#include "pipeline/request_context.h"
#include "protocol/ingress.h"
#include "protocol/stream.h"

namespace sluice::pipeline {

// What the caller receives for each upstream SSE event, in the caller's protocol, plus what
// metering needs. One per streamed request, on its worker; no I/O (the relay loop reads, feeds
// and writes). Two implementations, chosen by the (ingress, adapter) pair: passthrough (same
// protocol: events relayed verbatim, a sniffer reads usage) and translation (upstream decoder ->
// IR events -> caller's encoder).
class StreamTransform {
 public:
  virtual ~StreamTransform() = default;

  // Appends to `out` what the caller gets for one upstream event (possibly nothing). `at_end`:
  // the event was completed by the end of the upstream body, so it may lack its blank line.
  virtual void on_event(const codec::SseEvent& event, bool at_end, std::string& out) = 0;
  // The upstream body ended cleanly (no transport error). Appends what closes the caller's
  // stream, if anything (a translated stream's final events).
  virtual void on_end(std::string& out) = 0;
  // The stream finished properly: its terminator arrived, or it ended after its final answer
  // (some OpenAI-compatible servers never send [DONE]).
  virtual bool complete() const = 0;
  // The streaming commit point has passed: model output (a content, reasoning or tool-call
  // delta) or the final answer has been produced. Until then the relay may still give the
  // request to another target.
  virtual bool committed() const = 0;
  // Set when the stream cannot go on: the terminal error event is already in `out` and the
  // relay stops reading.
  virtual const std::optional<Error>& failed() const = 0;
  // Appends the terminal error event for a failure outside the stream (upstream broke, timed
  // out, ended early).
  virtual void on_failure(const Error& error, std::string& out) = 0;
  // Usage (IR terms, as the upstream reported it), finish reason, event count, clamped usage,
  // and the answering attempt's schema drift (StreamDecoder::unknown_fields; translation only).
  // May be called more than once (before each last write and at the end): each call leaves
  // `ctx` as if it had been the only one.
  virtual void report(RequestContext& ctx) = 0;
  // The id under which the upstream stored this answer (passthrough only: StreamSniffer::
  // stored_id()), "" when none.
  virtual std::string_view stored_id() const { return {}; }
};

std::unique_ptr<StreamTransform> make_passthrough(const protocol::IngressCodec& ingress,
                                                  std::unique_ptr<protocol::StreamSniffer> sniffer);

// `seal`: the caller's protocol seals reasoning state (IngressCodec::seals_reasoning); each
// signature `origin` (the upstream's protocol) made is sealed before the encoder sees it.
std::unique_ptr<StreamTransform> make_translation(const protocol::IngressCodec& ingress,
                                                  std::unique_ptr<protocol::StreamDecoder> decoder,
                                                  std::unique_ptr<protocol::StreamEncoder> encoder,
                                                  const ReasoningSeal* seal = nullptr,
                                                  protocol::ProtocolId origin = {});

}  // namespace sluice::pipeline
