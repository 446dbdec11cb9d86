#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "codec/request_head.h"
#include "ir/request.h"
#include "pipeline/downstream.h"
#include "pipeline/request_context.h"
#include "pipeline/snapshot.h"
#include "protocol/ingress.h"
#include "providers/exchange.h"

namespace sluice::pipeline {

class Pipeline;
class StreamTransform;

// The stages of one model call (POST to an ingress codec's path), in order:
//   decode   the ingress codec validates the body (400 in the caller's protocol)
//   route    alias -> route, the key's allow-list (404 / 403)
//   admit    the Admission hook (limits, budgets; 429)
//   cache    the ResponseCache hook (a hit ends the call)
//   plan     the targets to try, in order (one today; policy trees with the routing issue)
//   attempt  per target: passthrough or translation (the (ingress, adapter) pair decides),
//            the adapter frames the request, the connector opens the exchange, the adapter
//            classifies a failure
//   relay    the answer back to the caller: verbatim with a usage sniffer, or decoded to IR and
//            encoded in the caller's protocol; streams event by event
// The client-disconnect watch covers every stage that waits on an upstream and cancels it at
// once. Lives on the request's coroutine frame.
class ModelCall {
 public:
  ModelCall(const Pipeline& pipeline, RequestContext& ctx, const codec::RequestHead& head,
            Downstream& downstream);

  Awaitable<void> run(std::string_view body);

 private:
  Result<const RouteRuntime*> resolve_route(std::string_view model);
  // One attempt at `route`. Writes the caller's response unless the caller is gone.
  Awaitable<void> attempt(const RouteRuntime& route);
  Result<std::string> upstream_body(const RouteRuntime& route, bool passthrough);
  Awaitable<void> relay_failure(const RouteRuntime& route, providers::Exchange& exchange,
                                bool passthrough);
  Awaitable<void> relay_answer(const RouteRuntime& route, providers::Exchange& exchange,
                               bool passthrough);
  Awaitable<void> relay_stream(providers::Exchange& exchange, StreamTransform& transform,
                               const ResponseHead& head);
  // Copies the adapter's relayable upstream headers (rate-limit state) into `head`.
  void relay_headers(const RouteRuntime& route, const providers::Exchange& exchange,
                     ResponseHead& head, bool include_retry_headers) const;
  Awaitable<void> answer_error(const Error& error, Outcome outcome);
  // The caller went away (or the upstream read says so): record it, write nothing.
  void client_gone(const Error& error);

  const Pipeline& pipeline_;
  RequestContext& ctx_;
  const codec::RequestHead& head_;
  Downstream& downstream_;
  providers::Cancellation cancel_;
  protocol::IngressRequest request_;
  std::optional<ir::Request> ir_;  // decoded once for translation, reused across attempts
};

}  // namespace sluice::pipeline
