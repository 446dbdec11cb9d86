#pragma once

#include <string_view>

#include "codec/request_head.h"
#include "core/result.h"
#include "pipeline/downstream.h"
#include "pipeline/request_context.h"
#include "pipeline/snapshot.h"
#include "pipeline/upstream_connector.h"
#include "protocol/ingress.h"
#include "providers/exchange.h"

namespace sluice::pipeline {

class Pipeline;

// A GET of an object an upstream stored for the caller (IngressCodec::match_stored_object: an
// OpenAI Responses answer, GET /v1/responses/{id}). Only the provider that created it holds it:
//   locate   the affinity store (affinity.h) names the provider that relayed the id, for the
//            same gateway key; unknown, expired or another key's: 404 in the caller's protocol
//            saying the gateway has no record of it; the provider gone from the config: 404
//   frame    the adapter frames a GET of the resource (write_retrieval_head), the caller's
//            forwardable headers included
//   relay    the answer verbatim: status, body (or an event stream, relayed as it arrives) and
//            the adapter's relayable headers; an upstream error in the caller's shape as it is,
//            any other classified and answered in the caller's protocol
// One attempt, recorded like a model call's (access log, observers). Lives on the request's
// coroutine frame.
class StoredObjectCall {
 public:
  static Awaitable<void> serve(const Pipeline& pipeline, RequestContext& ctx,
                               const codec::RequestHead& head, Downstream& downstream);

  StoredObjectCall(const Pipeline& pipeline, RequestContext& ctx, const codec::RequestHead& head,
                   Downstream& downstream);
  Awaitable<void> run();

 private:
  // The provider that stored `id` for this caller, or the 404 to answer.
  Result<const ProviderRuntime*> locate(std::string_view id) const;
  Awaitable<void> relay(providers::Exchange& exchange, const providers::ProviderAdapter& adapter);
  Awaitable<void> relay_stream(providers::Exchange& exchange, ResponseHead& head);
  void client_gone(const Error& error);

  const Pipeline& pipeline_;
  RequestContext& ctx_;
  const codec::RequestHead& head_;
  Downstream& downstream_;
  providers::Cancellation cancel_;
  FramedRequest up_;
};

}  // namespace sluice::pipeline
