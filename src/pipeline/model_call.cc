#include "pipeline/model_call.h"

#include <array>
#include <random>

#include "codec/http_head.h"
#include "codec/sse.h"
#include "config/config.h"
#include "ir/token_estimate.h"
#include "pipeline/error_reply.h"
#include "pipeline/pipeline.h"
#include "pipeline/stream_transform.h"
#include "pipeline/trace_propagation.h"
#include "pipeline/upstream_relay.h"
#include "providers/adapter.h"

namespace sluice::pipeline {

namespace {

// The wait a failed attempt asked for: the upstream's retry-after-ms / Retry-After headers,
// else what its adapter read from the error body (Gemini's google.rpc.RetryInfo retryDelay).
std::optional<std::chrono::milliseconds> asked_wait(const Error& error,
                                                    const providers::Exchange* exchange) {
  if (exchange != nullptr) {
    if (auto asked = providers::asked_retry_after(*exchange)) {
      return asked;
    }
  }
  if (error.retry_after_seconds() > 0) {
    return std::chrono::seconds(error.retry_after_seconds());
  }
  return std::nullopt;
}

using std::chrono::duration_cast;
using std::chrono::microseconds;

constexpr std::size_t kMaxErrorBody = 1024 * 1024;
constexpr std::size_t kMaxSseEvent = 4 * 1024 * 1024;
// What a stream may send before its commit point (role chunk, message_start, metadata) that is
// held back so a failure can still go elsewhere. Past it the stream commits anyway.
constexpr std::size_t kMaxHeldPrelude = 64 * 1024;

bool is_success(int status) { return status >= 200 && status < 300; }

// A per-request random number for load balancing and jitter, from a per-thread generator.
std::uint64_t request_seed() {
  thread_local std::mt19937_64 generator{std::random_device{}()};
  return generator();
}

// Whether an attempt's failure says the target is unhealthy (for its circuit breaker): no
// answer, a broken answer, or a 5xx. A 429 is the provider's quota, not its health; 4xx are the
// request's fault.
bool unhealthy(const Attempt& attempt) {
  if (!attempt.error) {
    return attempt.status >= 500;
  }
  switch (attempt.error->kind()) {
    case ErrorKind::kUpstreamUnreachable:
    case ErrorKind::kUpstreamTimeout:
    case ErrorKind::kUpstreamProtocol:
      return true;
    case ErrorKind::kUpstreamStatus:
      return attempt.status >= 500 || attempt.error->http_status() >= 500;
    default:
      return false;
  }
}

}  // namespace

ModelCall::ModelCall(const Pipeline& pipeline, RequestContext& ctx, const codec::RequestHead& head,
                     Downstream& downstream)
    : pipeline_(pipeline), ctx_(ctx), head_(head), downstream_(downstream) {}

Result<const RouteRuntime*> ModelCall::resolve_route(std::string_view model) {
  const RouteRuntime* route = ctx_.snapshot->find_route(model);
  if (route == nullptr || route->operation != ctx_.ingress->operation()) {
    return model_not_found(model);
  }
  if (!Snapshot::key_allows(ctx_.key, model)) {
    return Error(ErrorKind::kForbidden,
                 "key '" + ctx_.key->name + "' may not use model '" + std::string(model) + "'")
        .with_code("model_not_allowed")
        .with_param("model");
  }
  ctx_.alias = ctx_.snapshot->stored_alias(model);
  return route;
}

Awaitable<void> ModelCall::serve(const Pipeline& pipeline, RequestContext& ctx,
                                 const codec::RequestHead& head, std::string_view body,
                                 Downstream& downstream) {
  ModelCall call(pipeline, ctx, head, downstream);
  co_await call.run(body);
}

Result<const RouteRuntime*> ModelCall::decode_and_route(std::string_view body) {
  auto decoded = ctx_.ingress->decode(body, head_);
  if (!decoded) {
    return std::move(decoded).error();
  }
  request_ = std::move(*decoded);
  ctx_.stream = request_.stream;
  ctx_.ignored_fields = request_.ignored_fields;
  return resolve_route(request_.model);
}

Awaitable<void> ModelCall::run(std::string_view body) {
  auto route = decode_and_route(body);
  if (!route) {
    co_await pipeline_.reject(ctx_, route.error(), downstream_);
    co_return;
  }
  if (ctx_.store_key != nullptr && ctx_.store_key->budget != nullptr) {
    const std::int64_t now_ms =
        std::chrono::duration_cast<std::chrono::milliseconds>(ctx_.wall_started.time_since_epoch())
            .count();
    if (ctx_.store_key->budget->exhausted(now_ms)) {
      co_await pipeline_.reject(ctx_, tenancy::budget_exhausted(*ctx_.store_key->budget, now_ms),
                                downstream_);
      co_return;
    }
  }
  if (Admission* admission = pipeline_.parts_.admission) {
    std::optional<Error> refused = co_await admission->admit(ctx_, request_);
    if (refused) {
      co_await pipeline_.reject(ctx_, *refused, downstream_);
      co_return;
    }
  }
  if (ResponseCache* cache = pipeline_.parts_.cache) {
    const bool served = co_await cache->serve_hit(ctx_, request_, downstream_);
    if (served) {
      co_return;
    }
  }
  ScopedWatch watch(downstream_, [this] { cancel_.cancel(); });
  co_await attempt_loop(**route);
  if (ctx_.usage) {
    for (RequestObserver* observer : pipeline_.parts_.observers) {
      observer->on_usage(ctx_, *ctx_.usage);
    }
  }
}

std::optional<std::size_t> ModelCall::pinned_target(const RouteRuntime& route,
                                                    std::optional<Error>& refused) const {
  if (request_.continues.empty() || pipeline_.parts_.affinity == nullptr) {
    return std::nullopt;
  }
  auto record = pipeline_.parts_.affinity->find(request_.continues, pipeline_.clock().now());
  const std::string_view owner = ctx_.key != nullptr ? std::string_view(ctx_.key->name) : "";
  if (!record || record->owner != owner) {
    return std::nullopt;  // unknown here: the plan's first target answers for itself
  }
  bool any_holds_state = false;  // a target of the caller's protocol (others refuse on their own)
  for (std::size_t i = 0; i < route.targets.size(); ++i) {
    const TargetRuntime& t = route.targets[i];
    if (t.provider->config->id == record->provider) {
      return i;
    }
    any_holds_state =
        any_holds_state || t.provider->adapter->speaks(ctx_.ingress->protocol(), route.operation);
  }
  if (!any_holds_state) {
    return std::nullopt;
  }
  refused = Error(ErrorKind::kBadRequest,
                  "previous_response_id '" + request_.continues + "' was stored by provider '" +
                      record->provider + "', which model '" + request_.model +
                      "' does not route to; continue it with a model served by that provider")
                .with_code("previous_response_not_found")
                .with_param("previous_response_id");
  return std::nullopt;
}

Awaitable<void> ModelCall::attempt_loop(const RouteRuntime& route) {
  // A continuation goes to the provider that stored what it continues, and only there: no
  // other target holds that state, so there is nothing to fail over to.
  std::optional<Error> refused;
  const std::optional<std::size_t> pinned = pinned_target(route, refused);
  if (refused) {
    co_await pipeline_.reject(ctx_, *refused, downstream_);
    co_return;
  }
  if (pinned) {
    backoff_ = std::chrono::milliseconds(0);
    co_await attempt(route.targets[*pinned]);
    co_return;
  }
  routing::AttemptPlan plan(route.policy, pipeline_.clock().now(), request_seed(), this);
  plan_ = &plan;
  routing::AttemptPlan::Step step = plan.first();
  for (;;) {
    next_.reset();
    co_await attempt(route.targets[step.target]);
    if (!next_ || cancel_.cancelled()) {
      break;
    }
    step = *next_;
    if (step.wait.count() > 0 && pipeline_.parts_.sleeper != nullptr) {
      const bool waited = co_await pipeline_.parts_.sleeper->sleep(step.wait, cancel_);
      if (!waited || downstream_.client_gone()) {
        client_gone(Error(ErrorKind::kClientGone, "client disconnected during a retry backoff"));
        break;
      }
    }
    backoff_ = step.wait;
  }
  plan_ = nullptr;
}

std::string_view ModelCall::key() const {
  return ctx_.key != nullptr ? std::string_view(ctx_.key->name) : std::string_view();
}

std::string_view ModelCall::key_group() const {
  return ctx_.key != nullptr ? std::string_view(ctx_.key->group) : std::string_view();
}

std::optional<std::string_view> ModelCall::header(std::string_view lower_name) const {
  if (!head_.has_header(lower_name)) {
    return std::nullopt;
  }
  return head_.header(lower_name);
}

std::optional<std::uint64_t> ModelCall::max_tokens() const {
  // Read from the IR when the codec built it eagerly; otherwise a throwaway decode of a copy,
  // so only rules on max_tokens pay for it and translation (strict mode, field counts) still
  // decodes the request itself.
  if (!max_tokens_read_) {
    max_tokens_read_ = true;
    if (ir_) {
      max_tokens_ = ir_->max_tokens;
    } else if (request_.ir) {
      max_tokens_ = request_.ir->max_tokens;
    } else {
      protocol::IngressRequest copy = request_;
      copy.strict_fields = false;
      if (auto ir = ctx_.ingress->to_ir(copy)) {
        max_tokens_ = ir->max_tokens;
      }
    }
  }
  if (!max_tokens_) {
    return std::nullopt;
  }
  return std::uint64_t{*max_tokens_};
}

bool ModelCall::fail_over(const Error& error, int status, const providers::Exchange* exchange) {
  if (plan_ == nullptr || cancel_.cancelled() || downstream_.client_gone()) {
    return false;
  }
  routing::Failure failure;
  failure.status = status;
  // The gateway's own pool for this provider is full: another target may well have room.
  failure.retryable = error.retryable() || error.kind() == ErrorKind::kRateLimited;
  failure.retry_after = asked_wait(error, exchange);
  next_ = plan_->after_failure(failure, pipeline_.clock().now());
  if (!next_) {
    ctx_.retry_stop = plan_->stop_reason();  // a literal: outlives the plan
  }
  return next_.has_value();
}

Result<std::string> ModelCall::upstream_body(const TargetRuntime& route, bool passthrough) {
  const protocol::IngressCodec& ingress = *ctx_.ingress;
  if (passthrough) {
    return ingress.passthrough_body(request_, route.model);
  }
  if (!ir_) {
    request_.strict_fields = ctx_.snapshot->config().server.strict_fields;
    auto ir = ingress.to_ir(request_);
    ctx_.ignored_fields = request_.ignored_fields;  // the full decode counts them
    if (!ir) {
      return std::move(ir).error();
    }
    ir_ = std::make_unique<ir::Request>(std::move(*ir));
  }
  const providers::ProviderAdapter& adapter = *route.provider->adapter;
  const protocol::UpstreamCodec* codec = adapter.upstream_codec(route.operation);
  if (codec == nullptr) {
    return Error(ErrorKind::kInternal, "provider '" + adapter.id() + "' has no upstream codec")
        .with_code("translation_unsupported");
  }
  return codec->encode_request(*ir_, adapter.encode_target(route.model, request_.stream));
}

std::optional<Error> ModelCall::frame_request(const TargetRuntime& route, bool passthrough) {
  const providers::ProviderAdapter& adapter = *route.provider->adapter;
  auto body = upstream_body(route, passthrough);
  if (!body) {
    return std::move(body).error();
  }
  up_.provider = route.provider;
  up_.operation = route.operation;
  up_.stream = request_.stream;
  up_.body = std::move(*body);
  up_.timeouts = route.timeouts;
  if (plan_ != nullptr) {
    // The route's deadline bounds this attempt too: it gets what is left, never more.
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        plan_->deadline() - pipeline_.clock().now());
    up_.timeouts.total = std::max(std::chrono::milliseconds(1), std::min(up_.timeouts.total, left));
    up_.timeouts.first_byte = std::min(up_.timeouts.first_byte, up_.timeouts.total);
  }
  HeaderList forwarded;
  add_forwarded_headers(head_, adapter, forwarded);
  UpstreamTrace trace;
  attempt_span_ = trace.add(ctx_, forwarded);
  providers::RequestSpec spec;
  spec.operation = route.operation;
  spec.protocol = passthrough ? ctx_.ingress->protocol() : adapter.wire_protocol(route.operation);
  spec.model = route.model;
  spec.stream = request_.stream;
  spec.request_id = ctx_.request_id;
  spec.content_length = up_.body.size();
  spec.forwarded = forwarded.view();
  up_.head.reserve(384);
  codec::HeadWriter writer(up_.head);
  adapter.write_request_head(spec, up_.body, writer);
  return std::nullopt;
}

Awaitable<void> ModelCall::attempt(const TargetRuntime& route) {
  const providers::ProviderAdapter& adapter = *route.provider->adapter;
  // Passthrough whenever the upstream speaks the caller's protocol, even when it prefers another
  // for translated traffic (OpenAI: Chat Completions and Responses).
  const bool passthrough = adapter.speaks(ctx_.ingress->protocol(), route.operation);
  if (!passthrough) {
    // Nothing to translate to (count_tokens towards a provider that does not count): the
    // gateway's own answer, no upstream call. Its state lives in the callee's frame.
    const bool answered = co_await answer_locally();
    if (answered) {
      co_return;
    }
  }
  if (std::optional<Error> refused = frame_request(route, passthrough)) {
    co_await pipeline_.reject(ctx_, *refused, downstream_);
    co_return;
  }

  Attempt& record = ctx_.attempts.emplace_back();
  record.provider = adapter.id();
  record.model = route.model;
  record.passthrough = passthrough;
  record.path = route.path;
  record.backoff = backoff_;
  record.span = attempt_span_;
  const auto started = pipeline_.clock().now();
  record.started = duration_cast<microseconds>(started - ctx_.started);
  routing::TargetHealth& health = *route.health;
  if (health.breaker.state() != routing::Breaker::State::kClosed) {
    record.breaker = routing::to_string(health.breaker.state());
  } else if (health.in_backoff(started)) {
    record.breaker = "backoff";  // closed, but the target asked for room (a 429)
  }
  health.breaker.on_attempt(started);
  health.in_flight.fetch_add(1, std::memory_order_relaxed);
  // Whatever way the attempt ends: its load is gone and its health is known.
  struct Settle {
    ModelCall& call;
    routing::TargetHealth& health;
    ~Settle() {
      health.in_flight.fetch_sub(1, std::memory_order_relaxed);
      const Attempt& a = call.ctx_.attempts.back();
      if (call.ctx_.outcome == Outcome::kClientGone && !a.error) {
        return;  // the caller left: nothing learnt about the target
      }
      if (a.first_byte.count() >= 0) {
        health.observe_ttfb(a.first_byte);
      }
      health.breaker.record(call.pipeline_.clock().now(), unhealthy(a),
                            call.ctx_.snapshot->config().routing.breaker);
    }
  } settle{*this, health};

  auto opened = co_await pipeline_.parts_.connector->open(up_, cancel_);
  if (!opened) {
    record.error = opened.error();
    record.duration = duration_cast<microseconds>(pipeline_.clock().now() - started);
    for (RequestObserver* observer : pipeline_.parts_.observers) {
      observer->on_attempt(ctx_, ctx_.attempts.back());
    }
    if (opened.error().kind() == ErrorKind::kClientGone || downstream_.client_gone()) {
      client_gone(opened.error());
      co_return;
    }
    if (fail_over(opened.error(), 0, nullptr)) {
      co_return;
    }
    co_await answer_error(opened.error(), Outcome::kUpstreamError);
    co_return;
  }
  providers::Exchange& exchange = **opened;
  cancel_.on_cancel([&exchange] { exchange.abort(); });
  record_exchange(exchange, record);

  if (is_success(exchange.status())) {
    co_await relay_answer(route, exchange, passthrough);
  } else {
    co_await relay_failure(route, exchange, passthrough);
  }
  cancel_.clear();
  // `record` may have moved if an observer added attempts; index the last one.
  Attempt& done = ctx_.attempts.back();
  done.duration = duration_cast<microseconds>(pipeline_.clock().now() - started);
  if ((!is_success(done.status) || ctx_.outcome == Outcome::kMidstreamError) && ctx_.error &&
      !done.error) {
    // A stream that broke after its commit point failed too (for the breaker and the log).
    done.error = ctx_.error;
  }
  for (RequestObserver* observer : pipeline_.parts_.observers) {
    observer->on_attempt(ctx_, ctx_.attempts.back());
  }
}

void ModelCall::relay_headers(const TargetRuntime& route, const providers::Exchange& exchange,
                              ResponseHead& head, bool include_retry_headers) const {
  relay_upstream_headers(*route.provider->adapter, exchange, head, include_retry_headers);
}

Awaitable<void> ModelCall::relay_failure(const TargetRuntime& route, providers::Exchange& exchange,
                                         bool passthrough) {
  const int status = exchange.status();
  auto read = co_await exchange.read_all(kMaxErrorBody);
  std::string body = read ? std::move(*read) : std::string();
  const providers::ProviderAdapter& adapter = *route.provider->adapter;
  scrub_secrets(body, adapter.secrets());  // before its words reach any message
  Error error = adapter.classify_failure(status, exchange, body);
  ctx_.attempts.back().error = error;
  if (!read && (read.error().kind() == ErrorKind::kClientGone || downstream_.client_gone())) {
    client_gone(read.error());
    co_return;
  }
  if (status == 429) {
    // The provider asked for room: other requests prefer other targets until the time it
    // asked for (1 s when it did not say), at most the route's retry_after_max.
    const auto asked = asked_wait(error, &exchange).value_or(std::chrono::milliseconds(1000));
    const auto cap = ctx_.snapshot->config().routing.retry.retry_after_max;
    route.health->back_off_until(pipeline_.clock().now() + std::min(asked, cap));
  }
  if (fail_over(error, status, &exchange)) {
    co_return;
  }
  ctx_.outcome = Outcome::kUpstreamError;
  ctx_.error = error;
  ResponseHead& head = downstream_.new_head();
  if (passthrough && error.code() != "upstream_auth_failed" &&
      ctx_.ingress->is_native_error(body)) {
    // Same protocol both sides: the provider's error object is already what the caller's SDK
    // parses; relay it with the provider's status (minus any secret it echoed).
    head.status = status;
    head.content_type = "application/json";
    add_standard_fields(ctx_, head);
    relay_headers(route, exchange, head, /*include_retry_headers=*/true);
    if (exchange.header("x-should-retry").empty()) {
      head.headers.add("x-should-retry", should_retry(error));
    }
    co_await downstream_.send(ctx_, head, body);
    co_return;
  }
  std::string encoded = error_response(ctx_, error, head);
  relay_headers(route, exchange, head, /*include_retry_headers=*/false);
  co_await downstream_.send(ctx_, head, encoded);
}

Result<std::unique_ptr<StreamTransform>> ModelCall::make_transform(const TargetRuntime& route,
                                                                   bool passthrough) {
  const protocol::IngressCodec& ingress = *ctx_.ingress;
  const providers::ProviderAdapter& adapter = *route.provider->adapter;
  if (passthrough) {
    if (auto sniffer = ingress.make_stream_sniffer(request_)) {
      return make_passthrough(ingress, std::move(sniffer));
    }
  } else {
    // What an encoder may have to state before the upstream reports usage (see ingress.h): the
    // prompt's text, tools and images counted from the IR the request was translated from
    // (JSON syntax and base64 image data would inflate a count of body bytes).
    request_.estimated_input_tokens =
        ir_ ? ir::estimate_input_tokens(*ir_) : request_.body.size() / 4 + 1;
    if (auto encoder = ingress.make_stream_encoder(request_)) {
      return make_translation(ingress,
                              adapter.upstream_codec(route.operation)->make_stream_decoder(),
                              std::move(encoder));
    }
  }
  return Error(ErrorKind::kInternal, "streams cannot be relayed between " +
                                         std::string(ingress.protocol()) + " and " +
                                         std::string(adapter.wire_protocol(route.operation)))
      .with_code("translation_unsupported");
}

Result<std::string> ModelCall::answer_body(const TargetRuntime& route, std::string body,
                                           bool passthrough) {
  const protocol::IngressCodec& ingress = *ctx_.ingress;
  const providers::ProviderAdapter& adapter = *route.provider->adapter;
  if (passthrough) {
    // Also when a stream was asked for and a JSON body came: relayed as the provider sent it
    // (the caller's SDK reads the same protocol). Logged as a relayed stream is: usage, finish
    // reason, and truncated when the answer hit its token limit.
    auto facts = ingress.facts_of_body(body);
    ctx_.usage = facts.usage;
    if (facts.finish != ir::FinishReason::kUnset) {
      ctx_.finish_reason = std::string(ir::to_string(facts.finish));
    }
    ctx_.outcome =
        facts.finish == ir::FinishReason::kLength ? Outcome::kTruncated : Outcome::kComplete;
    return body;
  }
  if (request_.stream) {
    return Error(ErrorKind::kUpstreamProtocol,
                 "provider '" + adapter.id() + "' answered a streaming request without a stream")
        .with_code("upstream_not_streaming");
  }
  auto decoded = adapter.upstream_codec(route.operation)->decode_response(body);
  if (!decoded) {
    return std::move(decoded).error();
  }
  ctx_.usage = decoded->usage;
  ctx_.attempts.back().unknown_fields = decoded->unknown_fields;
  ctx_.finish_reason = std::string(ir::to_string(decoded->finish));
  bool clamped = false;
  auto encoded = ingress.encode_response(*decoded, clamped);
  if (clamped) {
    ++ctx_.usage_clamped;
  }
  if (encoded) {
    ctx_.outcome = ctx_.finish_reason == "length" ? Outcome::kTruncated : Outcome::kComplete;
  }
  return encoded;
}

Awaitable<void> ModelCall::relay_answer(const TargetRuntime& route, providers::Exchange& exchange,
                                        bool passthrough) {
  const std::string_view content_type = exchange.header("content-type");
  if (request_.stream && content_type.starts_with("text/event-stream")) {
    auto transform = make_transform(route, passthrough);
    if (!transform) {
      co_await answer_error(transform.error(), Outcome::kUpstreamError);
      co_return;
    }
    ResponseHead& head = answer_head(route, exchange);
    head.content_type = "text/event-stream";
    head.headers.add("Cache-Control", "no-store");
    head.headers.add("X-Accel-Buffering", "no");
    co_await relay_stream(exchange, **transform, head);
    remember_stored(route, (*transform)->stored_id());
    co_return;
  }
  auto read =
      co_await exchange.read_all(ctx_.snapshot->config().server.max_upstream_response_bytes);
  if (!read) {
    if (read.error().kind() == ErrorKind::kClientGone || downstream_.client_gone()) {
      client_gone(read.error());
      co_return;
    }
    ctx_.attempts.back().error = read.error();
    if (fail_over(read.error(), 0, nullptr)) {
      co_return;
    }
    co_await answer_error(read.error(), Outcome::kUpstreamError);
    co_return;
  }
  auto answer = answer_body(route, std::move(*read), passthrough);
  if (!answer) {
    ctx_.attempts.back().error = answer.error();
    if (fail_over(answer.error(), 0, nullptr)) {
      ctx_.usage.reset();
      ctx_.finish_reason.clear();
      co_return;
    }
    co_await answer_error(answer.error(), Outcome::kUpstreamError);
    co_return;
  }
  if (passthrough) {
    remember_stored(route, ctx_.ingress->stored_id_of_body(request_, *answer));
  }
  ResponseHead& head = answer_head(route, exchange);
  if (passthrough && !content_type.empty()) {
    head.content_type = content_type;
  }
  co_await downstream_.send(ctx_, head, *answer);
}

Awaitable<bool> ModelCall::answer_locally() {
  std::optional<Result<protocol::IngressCodec::LocalAnswer>> local =
      ctx_.ingress->local_answer(request_);
  if (!local) {
    co_return false;
  }
  auto& answer = *local;
  if (!answer) {
    co_await pipeline_.reject(ctx_, answer.error(), downstream_);
    co_return true;
  }
  ctx_.outcome = Outcome::kComplete;
  ResponseHead& head = downstream_.new_head();
  add_standard_fields(ctx_, head);
  if (!answer->header.empty()) {
    head.headers.add(answer->header, answer->value);
  }
  co_await downstream_.send(ctx_, head, answer->body);
  co_return true;
}

ResponseHead& ModelCall::answer_head(const TargetRuntime& route,
                                     const providers::Exchange& exchange) {
  ResponseHead& head = downstream_.new_head();
  head.status = exchange.status();  // the exact 2xx the upstream gave
  add_standard_fields(ctx_, head);
  relay_headers(route, exchange, head, /*include_retry_headers=*/true);
  return head;
}

// Relays an SSE body as it arrives: one write per upstream read, no buffering beyond the event
// being assembled. A stream that breaks, times out or ends before its final answer gets the
// caller protocol's terminal error event, never a silent truncation.
//
// The streaming commit point: until the transform has produced model output (a content, tool
// call or reasoning delta, or the final answer), what it writes (role chunk, message_start) is
// held back and the head is not sent, so a failure then (status, timeout, reset, an error event)
// goes to the next attempt and the caller never sees it. After it, a failure ends the stream.
Awaitable<void> ModelCall::relay_stream(providers::Exchange& exchange, StreamTransform& transform,
                                        const ResponseHead& head) {
  codec::SseParser parser(kMaxSseEvent);
  std::string in;
  std::string out;
  std::string held;  // the prelude, before the commit point
  bool committed = false;
  std::optional<Error> failure;
  bool gone = false;
  bool ended = false;
  // The caller has been sent the whole answer, its terminator included ([DONE], message_stop,
  // response.completed): what happens after it (the caller hangs up at once, as the OpenAI SDK
  // does after [DONE]; the upstream stalls or resets before its body's end) does not make the
  // answer incomplete.
  bool answered = false;
  auto forward_events = [&](codec::SseParser::Status status, codec::SseEvent& ev, bool at_end) {
    while (status == codec::SseParser::Status::kEvent && !transform.failed()) {
      transform.on_event(ev, at_end, out);
      status = at_end ? parser.finish(ev) : parser.next(ev);
    }
    if (status == codec::SseParser::Status::kTooLarge && !failure) {
      failure = Error(ErrorKind::kUpstreamProtocol, "upstream sent an event larger than " +
                                                        std::to_string(kMaxSseEvent) + " bytes")
                    .with_code("upstream_event_too_large");
    }
  };
  for (;;) {
    in.clear();
    auto n = co_await exchange.read_some(in);
    if (!n) {
      failure = n.error();
    }
    out.clear();
    codec::SseEvent ev;
    if (!n) {
      // nothing read
    } else if (*n == 0) {
      forward_events(parser.finish(ev), ev, true);
      if (!failure && !transform.failed()) {
        transform.on_end(out);
      }
      ended = true;
    } else {
      parser.feed(in);
      forward_events(parser.next(ev), ev, false);
    }
    const bool stopping = ended || failure || transform.failed();
    if (!committed) {
      held.append(out);
      out.clear();
      const bool broken = failure || transform.failed() || (ended && !transform.complete());
      if (broken && !transform.committed() && !downstream_.client_gone() &&
          !(failure && failure->kind() == ErrorKind::kClientGone)) {
        // Before the commit point: the next attempt may still answer instead.
        Error why = failure              ? *failure
                    : transform.failed() ? *transform.failed()
                                         : Error(ErrorKind::kUpstreamProtocol,
                                                 "upstream stream ended before its final answer")
                                               .with_code("upstream_stream_truncated");
        ctx_.attempts.back().error = why;
        if (fail_over(why, 0, nullptr)) {
          exchange.abort();
          co_return;
        }
      }
      if (transform.committed() || stopping || held.size() > kMaxHeldPrelude) {
        committed = true;
        // co_await is kept out of if-conditions: GCC 12 miscompiles some of those.
        const bool head_sent = co_await downstream_.begin_stream(ctx_, head);
        if (!head_sent) {
          cancel_.cancel();
          client_gone(Error(ErrorKind::kClientGone, "client disconnected before the stream began"));
          co_return;
        }
        out.swap(held);
      }
    }
    if (!out.empty()) {
      if (ctx_.first_token.count() < 0) {
        ctx_.first_token = duration_cast<microseconds>(pipeline_.clock().now() - ctx_.started);
      }
      const bool sent = co_await downstream_.write(ctx_, out);
      if (!sent) {
        gone = true;
        cancel_.cancel();
        break;
      }
      answered = committed && transform.complete() && !transform.failed();
    }
    if (stopping) {
      break;
    }
  }
  transform.report(ctx_);
  if (answered) {
    co_await end_answered_stream(failure, gone, ended);
    co_return;
  }
  co_await end_stream_with(transform, std::move(failure), gone);
}

Awaitable<void> ModelCall::end_answered_stream(const std::optional<Error>& failure, bool gone,
                                               bool ended) {
  ctx_.outcome = ctx_.finish_reason == "length" ? Outcome::kTruncated : Outcome::kComplete;
  if (gone || downstream_.client_gone() || (failure && failure->kind() == ErrorKind::kClientGone)) {
    if (!ended) {
      cancel_.cancel();  // the upstream's unread end: its connection is closed, not pooled
    }
    co_return;
  }
  if (failure) {
    // The upstream broke after its final answer: nothing to add to a finished stream, and the
    // attempt keeps the error (the connection is not reused).
    cancel_.cancel();
    ctx_.attempts.back().error = *failure;
  }
  co_await downstream_.end_stream(ctx_);
}

Awaitable<void> ModelCall::end_stream_with(StreamTransform& transform, std::optional<Error> failure,
                                           bool gone) {
  if (failure && failure->kind() == ErrorKind::kClientGone) {
    gone = true;
  }
  if (gone || downstream_.client_gone()) {
    client_gone(Error(ErrorKind::kClientGone, "client disconnected during the stream"));
    co_return;
  }
  if (transform.failed()) {
    // The terminal error event went out with the last write.
    cancel_.cancel();
    ctx_.outcome = Outcome::kMidstreamError;
    ctx_.error = transform.failed();
    co_await downstream_.end_stream(ctx_);
    co_return;
  }
  if (!failure && !transform.complete()) {
    failure = Error(ErrorKind::kUpstreamProtocol, "upstream stream ended before its final answer")
                  .with_code("upstream_stream_truncated");
  }
  if (failure) {
    cancel_.cancel();
    ctx_.outcome = Outcome::kMidstreamError;
    ctx_.error = failure;
    std::string out;
    transform.on_failure(*failure, out);
    const bool sent = co_await downstream_.write(ctx_, out);
    if (!sent) {
      co_return;
    }
  } else {
    ctx_.outcome = ctx_.finish_reason == "length" ? Outcome::kTruncated : Outcome::kComplete;
  }
  co_await downstream_.end_stream(ctx_);
}

void ModelCall::remember_stored(const TargetRuntime& route, std::string_view id) const {
  if (id.empty() || pipeline_.parts_.affinity == nullptr) {
    return;
  }
  pipeline_.parts_.affinity->remember(id, route.provider->config->id,
                                      ctx_.key != nullptr ? std::string_view(ctx_.key->name) : "",
                                      pipeline_.clock().now());
}

Awaitable<void> ModelCall::answer_error(const Error& error, Outcome outcome) {
  ctx_.outcome = outcome;
  co_await pipeline_.reject(ctx_, error, downstream_);
}

void ModelCall::client_gone(const Error& error) {
  ctx_.outcome = Outcome::kClientGone;
  ctx_.error = error.kind() == ErrorKind::kClientGone
                   ? error
                   : Error(ErrorKind::kClientGone, "client disconnected");
  if (ctx_.status == 0) {
    ctx_.status = 499;  // nothing was written: log what nginx logs for it
  }
}

}  // namespace sluice::pipeline
