#include "pipeline/upstream_request.h"

#include "codec/http_head.h"
#include "ir/token_estimate.h"
#include "pipeline/call_context.h"
#include "pipeline/trace_propagation.h"
#include "pipeline/upstream_relay.h"
#include "protocol/upstream.h"
#include "providers/adapter.h"

namespace sluice::pipeline {

UpstreamRequest::UpstreamRequest(CallContext& call, const TargetRuntime& target)
    : call_(call),
      target_(target),
      // Passthrough whenever the upstream speaks the caller's protocol, even when it prefers
      // another for translated traffic (OpenAI: Chat Completions and Responses).
      mode_(target.provider->adapter->speaks(call.ingress().protocol(), target.operation)
                ? AttemptMode::kPassthrough
                : AttemptMode::kTranslation) {}

namespace {

Error no_codec(const protocol::IngressCodec& ingress, const providers::ProviderAdapter& adapter,
               protocol::Operation operation) {
  return Error(ErrorKind::kInternal, "requests cannot be translated between " +
                                         std::string(ingress.protocol()) + " and " +
                                         std::string(adapter.wire_protocol(operation)))
      .with_code("translation_unsupported");
}

}  // namespace

protocol::ProtocolId UpstreamRequest::wire_protocol() const {
  return passthrough() ? call_.ingress().protocol() : adapter().wire_protocol(target_.operation);
}

const ReasoningSeal* UpstreamRequest::seal() const {
  return call_.ingress().seals_reasoning() ? &call_.ctx().snapshot->reasoning_seal() : nullptr;
}

Attempt& UpstreamRequest::record() { return call_.ctx().attempts[record_]; }

std::optional<Error> UpstreamRequest::frame_body() {
  framed_.provider = target_.provider;
  framed_.operation = target_.operation;
  framed_.stream = call_.request().stream;
  framed_.timeouts = target_.timeouts;
  if (passthrough()) {
    framed_.body = call_.ingress().passthrough_body(call_.request(), target_.model);
    if (auto failed = apply_provider_options()) {
      return failed;
    }
    adapter().finish_body(wire_protocol(), framed_.stream, framed_.body);
    return std::nullopt;
  }
  auto ir = call_.ir_for_translation();
  if (!ir) {
    return std::move(ir).error();
  }
  const protocol::UpstreamCodec* codec = adapter().upstream_codec(target_.operation);
  if (codec == nullptr) {
    return no_codec(call_.ingress(), adapter(), target_.operation);  // the snapshot refuses these
  }
  // Reasoning another kind of upstream signed (an earlier turn answered elsewhere) would fail
  // this one: it is left out, for this attempt only.
  const ir::Request* request = *ir;
  std::optional<ir::Request> own;
  if (has_foreign_reasoning(*request, wire_protocol())) {
    own = without_foreign_reasoning(*request, wire_protocol());
    request = &*own;
    ++call_.ctx().ignored_fields;
  }
  auto body = codec->encode_request(*request,
                                    adapter().encode_target(target_.model, call_.request().stream));
  if (!body) {
    return std::move(body).error();
  }
  framed_.body = std::move(*body);
  if (auto failed = apply_provider_options()) {
    return failed;
  }
  adapter().finish_body(wire_protocol(), framed_.stream, framed_.body);
  return std::nullopt;
}

std::optional<Error> UpstreamRequest::apply_provider_options() {
  if (!call_.request().provider_options || target_.operation != protocol::Operation::kChat) {
    return std::nullopt;
  }
  auto bag = call_.provider_options();
  if (!bag) {
    return std::move(bag).error();
  }
  framed_.body = (*bag)->apply(framed_.body, wire_protocol(), call_.ctx().ignored_fields);
  return std::nullopt;
}

void UpstreamRequest::frame_head(std::optional<Clock::Monotonic::time_point> deadline) {
  if (deadline) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(*deadline - call_.clock().now());
    config::Timeouts& t = framed_.timeouts;
    t.total = std::max(std::chrono::milliseconds(1), std::min(t.total, left));
    t.first_byte = std::min(t.first_byte, t.total);
  }
  HeaderList forwarded;
  add_forwarded_headers(call_.head(), adapter(), forwarded);
  UpstreamTrace trace;
  span_ = trace.add(call_.ctx(), forwarded);
  providers::RequestSpec spec;
  spec.operation = target_.operation;
  spec.protocol = wire_protocol();
  spec.model = target_.model;
  spec.stream = call_.request().stream;
  spec.request_id = call_.ctx().request_id;
  spec.content_length = framed_.body.size();
  spec.forwarded = forwarded.view();
  framed_.head.clear();
  framed_.head.reserve(384);
  codec::HeadWriter writer(framed_.head);
  adapter().write_request_head(spec, framed_.body, writer);
}

std::optional<Error> UpstreamRequest::make_transform() {
  const protocol::IngressCodec& ingress = call_.ingress();
  if (passthrough()) {
    if (auto sniffer = ingress.make_stream_sniffer(call_.request())) {
      transform = make_passthrough(ingress, std::move(sniffer));
      return std::nullopt;
    }
  } else {
    // What an encoder may have to state before the upstream reports usage (see ingress.h): the
    // prompt's text, tools and images counted from the IR the request was translated from
    // (JSON syntax and base64 image data would inflate a count of body bytes).
    protocol::IngressRequest& request = call_.mutable_request();
    auto ir = call_.ir();
    request.estimated_input_tokens =
        ir ? ir::estimate_input_tokens(**ir) : request.body.size() / 4 + 1;
    const protocol::UpstreamCodec* codec = adapter().upstream_codec(target_.operation);
    auto encoder = codec != nullptr ? ingress.make_stream_encoder(request) : nullptr;
    if (encoder) {
      transform = make_translation(ingress, codec->make_stream_decoder(), std::move(encoder),
                                   seal(), wire_protocol());
      return std::nullopt;
    }
  }
  return Error(ErrorKind::kInternal, "streams cannot be relayed between " +
                                         std::string(ingress.protocol()) + " and " +
                                         std::string(adapter().wire_protocol(target_.operation)))
      .with_code("translation_unsupported");
}

Result<std::string> UpstreamRequest::answer(std::string body) {
  RequestContext& ctx = call_.ctx();
  const protocol::IngressCodec& ingress = call_.ingress();
  if (passthrough()) {
    // Also when a stream was asked for and a JSON body came: relayed as the provider sent it
    // (the caller's SDK reads the same protocol). Logged as a relayed stream is: usage, finish
    // reason, and truncated when the answer hit its token limit.
    auto facts = ingress.facts_of_body(body);
    ctx.usage = facts.usage;
    if (facts.finish != ir::FinishReason::kUnset) {
      ctx.finish_reason = std::string(ir::to_string(facts.finish));
    }
    ctx.outcome =
        facts.finish == ir::FinishReason::kLength ? Outcome::kTruncated : Outcome::kComplete;
    call_.set_stored_answer(ingress.stored_id_of_body(call_.request(), body), adapter().id());
    return body;
  }
  if (call_.request().stream) {
    return Error(ErrorKind::kUpstreamProtocol,
                 "provider '" + adapter().id() + "' answered a streaming request without a stream")
        .with_code("upstream_not_streaming");
  }
  const protocol::UpstreamCodec* codec = adapter().upstream_codec(target_.operation);
  if (codec == nullptr) {
    return no_codec(ingress, adapter(), target_.operation);
  }
  auto decoded = codec->decode_response(body);
  if (!decoded) {
    return std::move(decoded).error();
  }
  if (!decoded->usage) {
    decoded->usage = adapter().usage_from_headers(exchange());
  }
  ctx.usage = decoded->usage;
  record().unknown_fields = decoded->unknown_fields;
  ctx.finish_reason = std::string(ir::to_string(decoded->finish));
  if (const ReasoningSeal* s = seal()) {
    seal_reasoning(*decoded, *s, wire_protocol());
  }
  bool clamped = false;
  auto encoded = ingress.encode_response_for(call_.request(), *decoded, clamped);
  if (clamped) {
    ++ctx.usage_clamped;
  }
  if (encoded) {
    ctx.outcome = ctx.finish_reason == "length" ? Outcome::kTruncated : Outcome::kComplete;
  }
  return encoded;
}

}  // namespace sluice::pipeline
