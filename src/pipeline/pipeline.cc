#include "pipeline/pipeline.h"

#include <algorithm>

#include "codec/json_writer.h"
#include "config/config.h"
#include "pipeline/error_reply.h"
#include "pipeline/filters/registry.h"
#include "pipeline/model_call.h"
#include "pipeline/stored_object_call.h"
#include "pipeline/trace_propagation.h"
#include "pipeline/usage_observer.h"
#include "protocol/registry.h"

namespace sluice::pipeline {

namespace {

// The operational endpoints every protocol shares; model calls are the ingress codecs' paths.
struct OpsEndpoint {
  std::string_view path;
  std::string_view method;
  Endpoint endpoint;
  bool needs_key;
};

constexpr OpsEndpoint kOps[] = {
    {"/healthz", "GET", Endpoint::kHealth, false},
    {"/readyz", "GET", Endpoint::kReady, false},
    {"/v1/models", "GET", Endpoint::kModels, true},
    {"/v1beta/models", "GET", Endpoint::kModels, true},  // Gemini's list (its codec claims it)
    {"/metrics", "GET", Endpoint::kMetrics, false},      // only with admin.metrics_on_main
};

// Longer credentials are refused without hashing them.
constexpr std::size_t kMaxKeyBytes = 1024;

std::int64_t unix_ms(std::chrono::system_clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
}

std::string_view path_of(std::string_view target) { return target.substr(0, target.find('?')); }

// GET /v1/models/{alias} (OpenAI and Anthropic SDKs' retrieve); the alias may contain '/'.
constexpr std::string_view kModelPrefix = "/v1/models/";

std::string_view model_of(std::string_view path) {
  return path.starts_with(kModelPrefix) ? path.substr(kModelPrefix.size()) : std::string_view();
}

// The target as the access log keeps it: the value of a `key` query parameter (Gemini callers
// may send their gateway key that way) is masked.
std::string loggable_target(std::string_view target) {
  std::string out(target);
  for (std::size_t at = out.find('?'); at != std::string::npos; at = out.find('&', at + 1)) {
    if (std::string_view(out).substr(at + 1).starts_with("key=")) {
      const std::size_t begin = at + 5;
      const std::size_t end = std::min(out.find('&', begin), out.size());
      out.replace(begin, end - begin, "[redacted]");
    }
  }
  return out;
}

}  // namespace

Pipeline::Pipeline(PipelineParts parts) : parts_(parts), store_keys_(parts.store_keys) {
  if (parts_.clock == nullptr) {
    parts_.clock = &RealClock::instance();
  }
}

void Pipeline::begin(RequestContext& ctx) const {
  ctx.started = parts_.clock->now();
  ctx.wall_started = parts_.clock->wall_now();
  ctx.snapshot = parts_.host->current_snapshot();
  ctx.worker = parts_.worker;
}

void Pipeline::on_request_line(RequestContext& ctx, std::string_view method,
                               std::string_view target) const {
  ctx.method = std::string(method);
  ctx.path = loggable_target(target);
  const std::string_view path = path_of(target);
  ctx.endpoint = Endpoint::kNone;
  ctx.ingress = protocol::find_ingress(path);
  if (ctx.ingress != nullptr) {
    ctx.endpoint = Endpoint::kModelCall;
    return;
  }
  for (const protocol::IngressCodec* codec : protocol::ingress_codecs()) {
    if (codec->match_stored_object(target)) {
      ctx.ingress = codec;
      ctx.endpoint = Endpoint::kStoredObject;
      return;
    }
  }
  for (const OpsEndpoint& op : kOps) {
    if (op.path == path) {
      ctx.endpoint = op.endpoint;
    }
  }
  if (ctx.endpoint == Endpoint::kMetrics && (parts_.metrics == nullptr || ctx.snapshot == nullptr ||
                                             !ctx.snapshot->config().admin.metrics_on_main)) {
    ctx.endpoint = Endpoint::kNone;  // /metrics lives on the admin listener unless asked for here
  }
  if (!model_of(path).empty()) {
    ctx.endpoint = Endpoint::kModel;
  }
}

std::optional<Error> Pipeline::on_head(RequestContext& ctx, const codec::RequestHead& head) const {
  on_request_line(ctx, head.method(), head.target());
  begin_trace(ctx, head);
  std::string_view method = "POST";
  bool needs_key = true;
  if (ctx.endpoint == Endpoint::kModelCall) {
    method = ctx.ingress->method();
  } else if (ctx.endpoint == Endpoint::kStoredObject) {
    method = "GET";
  } else if (ctx.endpoint == Endpoint::kModel) {
    method = "GET";
    ctx.ingress = &protocol::claiming_ingress(head);
  } else {
    const std::string_view path = head.path();
    const OpsEndpoint* op = nullptr;
    for (const OpsEndpoint& candidate : kOps) {
      if (candidate.path == path && candidate.endpoint == ctx.endpoint) {
        op = &candidate;
      }
    }
    if (op == nullptr) {
      ctx.ingress = &protocol::claiming_ingress(head);  // the error in the caller's shape
      return Error(ErrorKind::kNotFound,
                   "no such endpoint: " + ctx.method + " " + std::string(path))
          .with_code("not_found");
    }
    method = op->method;
    needs_key = op->needs_key;
    if (ctx.endpoint == Endpoint::kModels) {
      // GET /v1/models is shared: the protocol that claims it answers in its list shape.
      ctx.ingress = &protocol::claiming_ingress(head);
    }
  }
  if (head.method() != method) {
    return Error(ErrorKind::kMethodNotAllowed,
                 "use " + std::string(method) + " for " + std::string(head.path()))
        .with_code("method_not_allowed");
  }
  const config::Config& cfg = ctx.snapshot->config();
  if (head.has_header("x-sluice-feature")) {
    ctx.feature = bounded_feature(head.header("x-sluice-feature"), cfg.metering.max_feature_length);
  }
  if (needs_key && cfg.require_auth) {
    const protocol::IngressCodec& codec =
        ctx.ingress != nullptr ? *ctx.ingress : protocol::default_ingress();
    const std::string_view presented = codec.credential(head);
    if (presented.empty()) {
      return Error(ErrorKind::kUnauthorized,
                   "missing API key: send 'Authorization: Bearer <key>' or 'x-api-key: <key>'")
          .with_code("missing_api_key");
    }
    if (auto refused = authenticate(ctx, presented)) {
      return refused;
    }
  }
  if (const std::string_view length = head.header("content-length"); !length.empty()) {
    // The transport validated the digits (and rejected lists and conflicts).
    std::uint64_t declared = 0;
    for (char c : length) {
      declared = declared * 10 + static_cast<unsigned>(c - '0');
      if (declared > cfg.server.max_body_bytes) {
        return Error(ErrorKind::kPayloadTooLarge,
                     "request body exceeds " + std::to_string(cfg.server.max_body_bytes) + " bytes")
            .with_code("request_too_large");
      }
    }
  }
  return std::nullopt;
}

std::optional<Error> Pipeline::authenticate(RequestContext& ctx, std::string_view presented) const {
  if (presented.size() > kMaxKeyBytes) {
    return tenancy::key_refused(tenancy::KeyVerdict::kUnknown, nullptr);
  }
  const std::array<char, 64> hash = sha256_hex(presented);
  const std::string_view digest(hash.data(), hash.size());
  ctx.key = ctx.snapshot->find_key(digest);
  if (ctx.key != nullptr) {
    return std::nullopt;  // the config's keys come first
  }
  const std::shared_ptr<const tenancy::KeySet>& set = store_keys_.get();
  if (set == nullptr) {
    return tenancy::key_refused(tenancy::KeyVerdict::kUnknown, nullptr);
  }
  const tenancy::KeySet::Found found = set->find(digest, unix_ms(ctx.wall_started));
  if (found.verdict != tenancy::KeyVerdict::kActive) {
    return tenancy::key_refused(found.verdict, found.key);
  }
  ctx.key = &found.key->key;
  ctx.store_key = found.key;
  ctx.key_set = set;
  return std::nullopt;
}

// Coroutine frames stay small (Asio recycles frames of at most 1020 bytes): each phase's state
// lives in its own callee, the response head in the transport.
Awaitable<void> Pipeline::serve(RequestContext& ctx, const codec::RequestHead& head,
                                std::string_view body, Downstream& downstream) const {
  if (ctx.endpoint == Endpoint::kModelCall) {
    co_await ModelCall::serve(*this, ctx, head, body, downstream);
    co_return;
  }
  if (ctx.endpoint == Endpoint::kStoredObject) {
    co_await StoredObjectCall::serve(*this, ctx, head, downstream);
    co_return;
  }
  if (ctx.endpoint == Endpoint::kModel) {
    // Only aliases this key may use exist for it, as in the list.
    const std::string_view alias = model_of(path_of(ctx.path));
    if (ctx.snapshot->find_route(alias) == nullptr || !Snapshot::key_allows(ctx.key, alias)) {
      co_await reject(ctx, model_not_found(alias), downstream);
      co_return;
    }
  }
  ResponseHead& res = downstream.new_head();
  std::string answer = ops_answer(ctx, res);
  if (res.status >= 400 && ctx.endpoint == Endpoint::kNone) {
    co_await reject(ctx, Error(ErrorKind::kNotFound, "no such endpoint").with_code("not_found"),
                    downstream);
    co_return;
  }
  co_await downstream.send(ctx, res, answer);
}

// Readiness with every target's health: breaker state and window, load, latency average and
// retry budget, so an operator sees what routing sees.
std::string Pipeline::ready_detail(const RequestContext& ctx) const {
  std::string out;
  codec::JsonWriter w(out);
  w.raw(R"({"status":"ready","config_version":)").number(ctx.snapshot->version());
  w.raw(R"(,"targets":[)");
  const config::BreakerSettings& settings = ctx.snapshot->config().routing.breaker;
  const auto now = parts_.clock->now();
  bool first = true;
  ctx.snapshot->health()->for_each([&](const routing::TargetHealth& h) {
    const auto [requests, failures] = h.breaker.window(now, settings);
    w.raw(first ? "{" : ",{");
    first = false;
    w.key("provider").string(h.provider);
    w.next_key("model").string(h.model);
    w.next_key("breaker").string(routing::to_string(h.breaker.state()));
    w.next_key("window_requests").number(std::uint64_t{requests});
    w.next_key("window_failures").number(std::uint64_t{failures});
    w.next_key("opened").number(h.breaker.opened_count());
    w.next_key("in_flight")
        .number(static_cast<std::int64_t>(h.in_flight.load(std::memory_order_relaxed)));
    w.next_key("ttfb_ewma_us").number(h.ttfb_ewma_us.load(std::memory_order_relaxed));
    const auto [budget_requests, budget_retries] =
        h.budget.window(now, ctx.snapshot->config().routing.budget_window);
    w.next_key("budget_window_requests").number(std::uint64_t{budget_requests});
    w.next_key("budget_window_retries").number(std::uint64_t{budget_retries});
    w.next_key("in_backoff").boolean(h.in_backoff(now));
    w.ch('}');
  });
  w.raw("]}");
  return out;
}

std::string Pipeline::ops_answer(RequestContext& ctx, ResponseHead& res) const {
  add_standard_fields(ctx, res);
  switch (ctx.endpoint) {
    case Endpoint::kHealth:
      return R"({"status":"ok"})";
    case Endpoint::kReady:
      if (parts_.host->draining()) {
        res.status = 503;
        return R"({"status":"draining"})";
      }
      if (parts_.store_keys != nullptr && !parts_.store_keys->attempted()) {
        // Store keys would be refused as unknown until the first load was tried.
        res.status = 503;
        return R"({"status":"starting","detail":"key directory: the first load of keys from the store has not been attempted yet"})";
      }
      return ready_detail(ctx);
    case Endpoint::kModels: {
      const protocol::IngressCodec& codec =
          ctx.ingress != nullptr ? *ctx.ingress : protocol::default_ingress();
      return codec.encode_model_list(ctx.snapshot->aliases_for(ctx.key));
    }
    case Endpoint::kModel:
      return ctx.ingress->encode_model(model_of(path_of(ctx.path)));
    case Endpoint::kMetrics:
      res.content_type = observability::MetricsRegistry::kContentType;
      return parts_.metrics->scrape();
    case Endpoint::kModelCall:
    case Endpoint::kStoredObject:
    case Endpoint::kNone:
      break;
  }
  res.status = 404;
  return {};
}

Awaitable<void> Pipeline::reject(RequestContext& ctx, const Error& error,
                                 Downstream& downstream) const {
  ctx.error = error;
  ResponseHead& head = downstream.new_head();
  const std::string body = error_response(ctx, error, head);
  co_await downstream.send(ctx, head, body);
}

std::shared_ptr<const RouteChains> Pipeline::chains(
    const std::shared_ptr<const Snapshot>& snapshot) const {
  if (chains_ == nullptr || chains_->snapshot() != snapshot.get()) {
    chains_ = std::make_shared<const RouteChains>(snapshot, parts_, filter_registry(),
                                                  parts_.extra_filters_for_test);
  }
  return chains_;
}

void Pipeline::end(RequestContext& ctx) const {
  ctx.ended = parts_.clock->now();
  ctx.wall_ended = parts_.clock->wall_now();
  // A model call charges itself when it ends (model_call.cc); one that never got that far (the
  // transport gave up on it) is charged here, for the observers to read.
  if (!ctx.charge && gets_usage_record(ctx) && ctx.snapshot != nullptr) {
    ctx.charge = ctx.snapshot->price_book().charge(charge_input(ctx));
  }
  for (RequestObserver* observer : parts_.observers) {
    observer->on_finish(ctx);
  }
}

}  // namespace sluice::pipeline
