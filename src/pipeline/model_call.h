#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "codec/request_head.h"
#include "ir/request.h"
#include "pipeline/downstream.h"
#include "pipeline/request_context.h"
#include "pipeline/snapshot.h"
#include "pipeline/upstream_connector.h"
#include "protocol/ingress.h"
#include "providers/exchange.h"
#include "routing/plan.h"

namespace sluice::pipeline {

class Pipeline;
class StreamTransform;

// The stages of one model call (POST to an ingress codec's path), in order:
//   decode   the ingress codec validates the body (400 in the caller's protocol)
//   route    alias -> route, the key's allow-list (404 / 403)
//   admit    the Admission hook (limits, budgets; 429)
//   cache    the ResponseCache hook (a hit ends the call)
//   plan     the route's policy tree ordered for this request (routing::AttemptPlan)
//   attempt  per target: passthrough or translation (the (ingress, adapter) pair decides),
//            the adapter frames the request, the connector opens the exchange, the adapter
//            classifies a failure; a failure before anything reached the caller asks the plan
//            for the next attempt (same target after a backoff, or the next in the tree)
//   relay    the answer back to the caller: verbatim with a usage sniffer, or decoded to IR and
//            encoded in the caller's protocol; streams event by event
// The client-disconnect watch covers every stage that waits on an upstream and cancels it at
// once. Lives on the request's coroutine frame.
class ModelCall final : private routing::RequestFacts {
 public:
  // Serves one model call: constructs the call and runs it.
  static Awaitable<void> serve(const Pipeline& pipeline, RequestContext& ctx,
                               const codec::RequestHead& head, std::string_view body,
                               Downstream& downstream);

  ModelCall(const Pipeline& pipeline, RequestContext& ctx, const codec::RequestHead& head,
            Downstream& downstream);

  Awaitable<void> run(std::string_view body);

 private:
  // Decode and route (no I/O): the route, or the error to answer with.
  Result<const RouteRuntime*> decode_and_route(std::string_view body);
  Result<const RouteRuntime*> resolve_route(std::string_view model);
  // routing::RequestFacts, for conditional policy nodes.
  std::string_view key() const override;
  std::string_view key_group() const override;
  std::optional<std::string_view> header(std::string_view lower_name) const override;
  bool stream() const override { return request_.stream; }
  std::optional<std::uint64_t> max_tokens() const override;

  // The target a continuation must go to (the provider that stored what it continues), when
  // the affinity store knows it for this caller; `refused` when this route has no target there.
  std::optional<std::size_t> pinned_target(const RouteRuntime& route,
                                           std::optional<Error>& refused) const;
  // Runs the plan's attempts until one answers the caller, the plan stops or the caller goes.
  Awaitable<void> attempt_loop(const RouteRuntime& route);
  // One attempt at `route`. Writes the caller's response unless the caller is gone or the
  // failure was handed to the next attempt (next_ set).
  Awaitable<void> attempt(const TargetRuntime& route);
  // A failure before anything reached the caller: whether the plan has a next attempt (then
  // kept in next_ and nothing is written for this one). `exchange` gives the upstream's
  // Retry-After when it answered.
  bool fail_over(const Error& error, int status, const providers::Exchange* exchange);
  // Frames the request for `route` into up_ (body, head by the adapter). No I/O.
  std::optional<Error> frame_request(const TargetRuntime& route, bool passthrough);
  Result<std::string> upstream_body(const TargetRuntime& route, bool passthrough);
  Awaitable<void> relay_failure(const TargetRuntime& route, providers::Exchange& exchange,
                                bool passthrough);
  Awaitable<void> relay_answer(const TargetRuntime& route, providers::Exchange& exchange,
                               bool passthrough);
  // The stream transform the (ingress, adapter) pair calls for.
  Result<std::unique_ptr<StreamTransform>> make_transform(const TargetRuntime& route,
                                                          bool passthrough);
  // A complete answer in the caller's protocol (verbatim, or decoded and re-encoded); records
  // usage, finish reason and outcome. No I/O.
  Result<std::string> answer_body(const TargetRuntime& route, std::string body, bool passthrough);
  // The head of a successful answer: the upstream's status and relayed headers.
  ResponseHead& answer_head(const TargetRuntime& route, const providers::Exchange& exchange);
  // Relays the stream once it commits (first content, tool call or final answer): until then
  // its prelude is held back, and a failure may still go to the next attempt instead.
  Awaitable<void> relay_stream(providers::Exchange& exchange, StreamTransform& transform,
                               const ResponseHead& head);
  // The stream's end once the caller has had the whole answer: complete (or truncated by
  // length) whatever the client or the upstream does after it.
  Awaitable<void> end_answered_stream(const std::optional<Error>& failure, bool gone, bool ended);
  // The terminal error event and the stream's end after a failure: what relay_stream ends with.
  Awaitable<void> end_stream_with(StreamTransform& transform, std::optional<Error> failure,
                                  bool gone);
  // Copies the adapter's relayable upstream headers (rate-limit state) into `head`.
  void relay_headers(const TargetRuntime& route, const providers::Exchange& exchange,
                     ResponseHead& head, bool include_retry_headers) const;
  Awaitable<void> answer_error(const Error& error, Outcome outcome);
  // Sends the codec's own answer (IngressCodec::local_answer) or its error; false when the
  // codec has none (the request is translated).
  Awaitable<bool> answer_locally();
  // An answer relayed verbatim that the upstream stored under `id` (a Responses answer): the
  // affinity store remembers its provider for GETs and continuations.
  void remember_stored(const TargetRuntime& route, std::string_view id) const;
  // The caller went away (or the upstream read says so): record it, write nothing.
  void client_gone(const Error& error);

  const Pipeline& pipeline_;
  RequestContext& ctx_;
  const codec::RequestHead& head_;
  Downstream& downstream_;
  providers::Cancellation cancel_;
  protocol::IngressRequest request_;
  UpstreamRequest up_;               // the current attempt's framed request
  std::unique_ptr<ir::Request> ir_;  // decoded once for translation, reused across attempts
  mutable std::optional<std::uint32_t> max_tokens_;  // for conditional rules, read once
  mutable bool max_tokens_read_ = false;
  routing::AttemptPlan* plan_ = nullptr;            // during the attempt loop
  std::optional<routing::AttemptPlan::Step> next_;  // set by fail_over()
  std::chrono::milliseconds backoff_{0};            // waited before the current attempt
  observability::SpanId attempt_span_ = 0;          // the current attempt's, set by frame_request()
};

}  // namespace sluice::pipeline
