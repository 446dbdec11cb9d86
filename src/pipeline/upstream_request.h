#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "core/clock.h"
#include "core/result.h"
#include "pipeline/request_context.h"
#include "pipeline/snapshot.h"
#include "pipeline/stream_transform.h"
#include "pipeline/upstream_connector.h"
#include "providers/exchange.h"

namespace sluice::pipeline {

class CallContext;

// How an attempt speaks to its upstream; the (caller protocol, adapter) pair decides.
enum class AttemptMode : std::uint8_t {
  kPassthrough,  // the upstream speaks the caller's protocol: bytes relayed, usage sniffed
  kTranslation,  // the request goes through the IR to the adapter's protocol, the answer back
};

// One attempt at one target (Pingora's upstream request): what is sent, what came back, how it
// failed and, for a stream, the transform its events go through. Everything that differs
// between passthrough and translation is decided here, by mode(). Made by the attempt loop for
// each attempt and kept until the attempt has settled; one worker thread.
class UpstreamRequest {
 public:
  UpstreamRequest(CallContext& call, const TargetRuntime& target);
  UpstreamRequest(const UpstreamRequest&) = delete;
  UpstreamRequest& operator=(const UpstreamRequest&) = delete;

  const TargetRuntime& target() const { return target_; }
  const providers::ProviderAdapter& adapter() const { return *target_.provider->adapter; }
  AttemptMode mode() const { return mode_; }
  bool passthrough() const { return mode_ == AttemptMode::kPassthrough; }
  // The protocol the body is written in: the caller's in passthrough, the adapter's otherwise.
  protocol::ProtocolId wire_protocol() const;

  // Frames the body: the caller's bytes with the upstream model spliced in (passthrough), or
  // the IR encoded for the adapter (translation; a 400 for what the target cannot express).
  std::optional<Error> frame_body();
  // The caller's provider_options (provider_options.h) applied to framed_.body for this
  // attempt's wire protocol, the bag itself kept out of it; its 400 when the bag is not allowed.
  std::optional<Error> apply_provider_options();
  const std::string& body() const { return framed_.body; }
  // Writes the head for the body as it now is: the adapter's request line, authentication and
  // signing, the caller's forwardable headers, this attempt's traceparent. The attempt gets
  // what is left before `deadline` (the route's), never more.
  void frame_head(std::optional<Clock::Monotonic::time_point> deadline);
  const FramedRequest& framed() const { return framed_; }
  // The parent span id this attempt sent upstream (RequestContext::Attempt::span).
  observability::SpanId span() const { return span_; }

  // The answer, once the connector opened the exchange.
  void set_exchange(std::unique_ptr<providers::Exchange> exchange) {
    exchange_ = std::move(exchange);
  }
  providers::Exchange& exchange() { return *exchange_; }
  // This attempt's record in the context (made when it is sent).
  Attempt& record();
  void set_record(std::size_t index) { record_ = index; }

  // The stream transform the pair calls for: a sniffer over verbatim events, or the adapter's
  // decoder into the caller's encoder. An error when the pair has no stream relay.
  std::optional<Error> make_transform();
  // A complete answer in the caller's protocol: verbatim, or decoded and re-encoded; records
  // usage, finish reason and outcome in the context. No I/O.
  Result<std::string> answer(std::string body);

  // Why the attempt failed (the breaker and the log read it), set by whoever saw it.
  std::optional<Error> failure;
  // A streamed answer's transform (make_transform).
  std::unique_ptr<StreamTransform> transform;

 private:
  // The snapshot's seal when the caller's protocol seals reasoning state, null otherwise.
  const ReasoningSeal* seal() const;

  CallContext& call_;
  const TargetRuntime& target_;
  AttemptMode mode_;
  FramedRequest framed_;
  observability::SpanId span_ = 0;
  std::unique_ptr<providers::Exchange> exchange_;
  std::size_t record_ = 0;
};

}  // namespace sluice::pipeline
