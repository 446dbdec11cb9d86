#include "server/handlers.h"

#include <boost/beast/http/empty_body.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

#include "codec/json_writer.h"
#include "codec/sse.h"
#include "core/version.h"
#include "http/head_writer.h"
#include "http/upstream_call.h"
#include "protocol/anthropic/errors.h"
#include "protocol/anthropic/messages_request.h"
#include "protocol/anthropic/messages_response.h"
#include "protocol/openai_chat/chat_request.h"
#include "protocol/openai_chat/errors.h"
#include "protocol/openai_chat/ir_request.h"
#include "protocol/openai_chat/ir_response.h"
#include "protocol/openai_chat/stream_monitor.h"
#include "providers/mock_provider.h"
#include "server/snapshot.h"
#include "server/stream_transform.h"
#include "server/worker.h"

namespace sluice::server {
namespace json = boost::json;
namespace chat = protocol::openai_chat;
namespace anthropic = protocol::anthropic;
namespace net = http::net;
using Clock = std::chrono::steady_clock;

namespace {

enum class Endpoint { kUnknown, kHealth, kReady, kModels, kChat, kEmbeddings, kMessages };

struct Route {
  std::string_view path;
  bhttp::verb method;
  Endpoint endpoint;
  bool needs_key;
};

constexpr Route kRoutes[] = {
    {"/healthz", bhttp::verb::get, Endpoint::kHealth, false},
    {"/readyz", bhttp::verb::get, Endpoint::kReady, false},
    {"/v1/models", bhttp::verb::get, Endpoint::kModels, true},
    {"/v1/chat/completions", bhttp::verb::post, Endpoint::kChat, true},
    {"/v1/embeddings", bhttp::verb::post, Endpoint::kEmbeddings, true},
    {"/v1/messages", bhttp::verb::post, Endpoint::kMessages, true},
};

std::string_view sv(boost::beast::string_view s) { return {s.data(), s.size()}; }

std::string_view path_of(std::string_view target) { return target.substr(0, target.find('?')); }

const Route* find_route(std::string_view path) {
  for (const Route& r : kRoutes) {
    if (r.path == path) {
      return &r;
    }
  }
  return nullptr;
}

// The gateway key from `Authorization: Bearer`, or from `x-api-key` / `api-key`, the
// headers the Anthropic and Azure SDKs send, so those clients work unchanged.
std::string_view presented_key(const RequestHeader& head) {
  if (auto it = head.find(bhttp::field::authorization); it != head.end()) {
    std::string_view v = sv(it->value());
    if (v.size() > 7 && boost::beast::iequals(v.substr(0, 7), "Bearer ")) {
      v.remove_prefix(7);
      while (!v.empty() && v.front() == ' ') {
        v.remove_prefix(1);
      }
      return v;
    }
    return {};
  }
  for (const char* name : {"x-api-key", "api-key"}) {
    if (auto it = head.find(name); it != head.end()) {
      return sv(it->value());
    }
  }
  return {};
}

bool header_forwarded(std::string_view name, const std::vector<std::string>& patterns) {
  for (const std::string& p : patterns) {
    if (!p.empty() && p.back() == '*') {
      std::string_view prefix(p.data(), p.size() - 1);
      if (name.size() >= prefix.size() &&
          boost::beast::iequals(name.substr(0, prefix.size()), prefix)) {
        return true;
      }
    } else if (boost::beast::iequals(name, p)) {
      return true;
    }
  }
  return false;
}

Response json_response(bhttp::status status, std::string body) {
  Response res{status, 11};
  res.set(bhttp::field::content_type, "application/json");
  res.body() = std::move(body);
  return res;
}

Error model_not_found(std::string_view alias) {
  return Error(ErrorKind::kNotFound, "The model '" + std::string(alias) +
                                         "' does not exist or you do not have access to it.")
      .with_code("model_not_found")
      .with_param("model");
}

// Relays an SSE body from `next` to the client as it arrives: one write per upstream read,
// no buffering beyond the event being assembled; `transform` decides what the caller gets
// for each event (verbatim, or translated). A stream that ends without its terminator or
// breaks gets an explicit error event, never a silent truncation.
template <class Next>
http::Awaitable<void> relay_stream(Session& session, RequestContext& ctx,
                                   StreamTransform& transform, http::CancelToken& cancel,
                                   Next next) {
  bhttp::response<bhttp::empty_body> head{bhttp::status::ok, 11};
  head.set(bhttp::field::content_type, "text/event-stream");
  head.set(bhttp::field::cache_control, "no-store");
  head.set("X-Accel-Buffering", "no");
  // co_await is kept out of if-conditions: GCC 12 miscompiles some of those.
  const bool head_sent = co_await session.send_stream_head(ctx, head);
  if (!head_sent) {
    cancel.cancel();
    ctx.outcome = Outcome::kClientGone;
    co_return;
  }
  const std::size_t max_event = 4 * 1024 * 1024;
  codec::SseParser parser(max_event);
  std::string in;
  std::string out;
  std::optional<Error> failure;
  bool client_gone = false;
  auto forward_events = [&](codec::SseParser::Status status, codec::SseEvent& ev, bool at_end) {
    while (status == codec::SseParser::Status::kEvent && !transform.failed()) {
      transform.on_event(ev, at_end, out);
      status = at_end ? parser.finish(ev) : parser.next(ev);
    }
    if (status == codec::SseParser::Status::kTooLarge && !failure) {
      failure = Error(ErrorKind::kUpstreamProtocol,
                      "upstream sent an event larger than " + std::to_string(max_event) + " bytes")
                    .with_code("upstream_event_too_large");
    }
  };
  for (;;) {
    in.clear();
    auto n = co_await next(in);
    if (!n) {
      failure = n.error();
      break;
    }
    out.clear();
    codec::SseEvent ev;
    if (*n == 0) {
      forward_events(parser.finish(ev), ev, true);
    } else {
      parser.feed(in);
      forward_events(parser.next(ev), ev, false);
    }
    if (!out.empty()) {
      if (ctx.first_token.count() < 0) {
        ctx.first_token =
            std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - ctx.started);
      }
      const bool sent = co_await session.send_chunk(ctx, out);
      if (!sent) {
        client_gone = true;
        cancel.cancel();
        break;
      }
    }
    if (*n == 0 || failure || transform.failed()) {
      break;
    }
  }
  transform.report(ctx);
  if (failure && failure->kind() == ErrorKind::kClientGone) {
    client_gone = true;
  }
  if (client_gone || session.client_gone()) {
    ctx.outcome = Outcome::kClientGone;
    ctx.error = Error(ErrorKind::kClientGone, "client disconnected during the stream");
    co_return;
  }
  if (transform.failed()) {
    // The terminal error event went out with the last chunk.
    cancel.cancel();
    ctx.outcome = Outcome::kMidstreamError;
    ctx.error = transform.failed();
    co_await session.send_last_chunk(ctx);
    co_return;
  }
  if (!failure && !transform.done()) {
    failure = Error(ErrorKind::kUpstreamProtocol, "upstream stream ended before [DONE]")
                  .with_code("upstream_stream_truncated");
  }
  if (failure) {
    cancel.cancel();
    ctx.outcome = Outcome::kMidstreamError;
    ctx.error = failure;
    out.clear();
    transform.on_failure(*failure, out);
    const bool sent = co_await session.send_chunk(ctx, out);
    if (!sent) {
      co_return;
    }
  } else {
    ctx.outcome = ctx.finish_reason == "length" ? Outcome::kTruncated : Outcome::kComplete;
  }
  co_await session.send_last_chunk(ctx);
}

// One model call as the handlers see it once the caller's body is decoded: what to send
// upstream and how to turn the answer into the caller's protocol.
struct CallPlan {
  Endpoint endpoint = Endpoint::kChat;
  bool stream = false;
  bool include_usage = false;  // OpenAI passthrough: the caller asked for the usage chunk
  // The OpenAI-shaped request for the upstream (built by splicing for passthrough, encoded
  // from the IR for translation) and, for OpenAI callers, their decoded request (views
  // into the caller's body).
  std::string upstream_body;
  std::optional<chat::ChatRequest> chat_request;
  bool translate() const { return endpoint == Endpoint::kMessages; }
};

// Non-stream answer: the upstream's OpenAI body to what the caller receives.
Result<std::string> finish_body(RequestContext& ctx, const CallPlan& plan, std::string body) {
  if (!plan.translate()) {
    ctx.usage = chat::usage_from_response(body);
    return body;
  }
  auto decoded = chat::decode_response(body);
  if (!decoded) {
    return decoded.error();
  }
  ctx.usage = decoded->usage;
  ctx.finish_reason = std::string(ir::to_string(decoded->finish));
  return anthropic::encode_response(*decoded);
}

// An upstream error answer in the caller's protocol. Bodies are OpenAI-shaped (or anything
// an OpenAI-compatible server sends); for Anthropic callers the message is carried over
// into Anthropic's error object with the type that matches the status.
std::string error_body_for_caller(const CallPlan& plan, std::string_view body, int status,
                                  std::string_view provider_id) {
  std::string normalised = chat::normalise_upstream_error(body, status, provider_id);
  if (!plan.translate()) {
    return normalised;
  }
  std::string message =
      "provider '" + std::string(provider_id) + "' returned " + std::to_string(status);
  boost::system::error_code ec;
  json::value doc = json::parse(normalised, ec);
  if (!ec && doc.is_object()) {
    if (const json::value* e = doc.get_object().if_contains("error"); e && e->is_object()) {
      if (const json::value* m = e->get_object().if_contains("message"); m && m->is_string()) {
        message = std::string(m->get_string());
      }
    }
  }
  return anthropic::encode_error(anthropic::error_type_for_status(status), message);
}

std::unique_ptr<StreamTransform> make_transform(const CallPlan& plan) {
  if (plan.translate()) {
    return make_openai_to_anthropic();
  }
  return make_openai_passthrough(!plan.include_usage);
}

// Sends a non-stream answer, or the error finish_body raised.
http::Awaitable<void> send_body(Session& session, RequestContext& ctx, const CallPlan& plan,
                                std::string body, std::string_view content_type) {
  auto answer = finish_body(ctx, plan, std::move(body));
  if (!answer) {
    ctx.outcome = Outcome::kUpstreamError;
    co_await session.send_error(ctx, answer.error());
    co_return;
  }
  ctx.outcome = Outcome::kComplete;
  Response res = json_response(bhttp::status::ok, std::move(*answer));
  if (!content_type.empty() && !plan.translate()) {
    res.set(bhttp::field::content_type, content_type);
  }
  co_await session.send(ctx, res);
}

http::Awaitable<void> serve_mock(Session& session, RequestContext& ctx, const CallPlan& plan,
                                 const RouteRuntime& route) {
  const config::Provider& provider = *route.provider->config;
  // Translated calls reach the mock as the OpenAI request an upstream would get.
  std::optional<chat::ChatRequest> translated;
  if (!plan.chat_request) {
    auto decoded = chat::decode_chat_request(plan.upstream_body);
    if (!decoded) {
      ctx.outcome = Outcome::kUpstreamError;
      co_await session.send_error(
          ctx, Error(ErrorKind::kInternal,
                     "translated request did not validate: " + decoded.error().message()));
      co_return;
    }
    translated.emplace(std::move(*decoded));
  }
  const chat::ChatRequest& request = translated ? *translated : *plan.chat_request;
  providers::MockReply reply =
      plan.endpoint == Endpoint::kEmbeddings
          ? providers::mock_embeddings(request, route.model, provider.mock_embedding_dimensions)
          : providers::mock_chat(request, route.model);
  if (!plan.stream) {
    co_await send_body(session, ctx, plan, std::move(reply.body), {});
    co_return;
  }
  http::CancelToken cancel;
  net::steady_timer pace(session.worker().io_context());
  auto watch = session.watch_disconnect([&] {
    cancel.cancel();
    pace.cancel();
  });
  std::size_t next_event = 0;
  const auto interval = provider.mock_chunk_interval;
  auto transform = make_transform(plan);
  co_await relay_stream(session, ctx, *transform, cancel,
                        [&](std::string& buf) -> http::Awaitable<Result<std::size_t>> {
                          if (next_event >= reply.events.size()) {
                            co_return std::size_t{0};
                          }
                          if (interval.count() > 0 && next_event > 0) {
                            pace.expires_after(interval);
                            co_await pace.async_wait(http::use_nothrow);
                          }
                          if (cancel.cancelled) {
                            co_return Error(ErrorKind::kClientGone, "client disconnected");
                          }
                          buf.append(reply.events[next_event++]);
                          co_return buf.size();
                        });
}

http::Awaitable<void> serve_upstream(Session& session, RequestContext& ctx, const Request& req,
                                     CallPlan& plan, const RouteRuntime& route) {
  const ProviderRuntime& provider = *route.provider;
  http::UpstreamRequest up;
  up.body = std::move(plan.upstream_body);
  up.head.reserve(384);
  http::HeadWriter head(up.head);
  head.request_line("POST", provider.url.path_prefix,
                    plan.endpoint == Endpoint::kEmbeddings ? "/embeddings" : "/chat/completions")
      .field("Host", provider.url.host_header)
      .field("User-Agent", kUserAgent);
  for (const auto& [name, value] : provider.headers) {
    head.field(name, value);
  }
  head.field("Content-Type", "application/json")
      .field("Accept", plan.stream ? "text/event-stream" : "application/json")
      .field("x-request-id", ctx.request_id);
  const auto& forward = provider.config->forward_headers;
  if (!forward.empty()) {
    for (const auto& field : req) {
      std::string_view name = sv(field.name_string());
      if (header_forwarded(name, forward)) {
        head.field(name, sv(field.value()));
      }
    }
  }
  head.field("Content-Length", static_cast<std::uint64_t>(up.body.size()));
  head.end();

  http::CancelToken cancel;
  auto watch = session.watch_disconnect([&cancel] { cancel.cancel(); });
  auto pool = session.worker().pool_for(provider.endpoint);
  auto started = co_await http::UpstreamCall::start(pool, up, route.timeouts, &cancel);
  if (!started) {
    const Error& err = started.error();
    ctx.error = err;
    if (err.kind() == ErrorKind::kClientGone || session.client_gone()) {
      ctx.outcome = Outcome::kClientGone;
      ctx.status = 499;
      co_return;
    }
    ctx.outcome = Outcome::kUpstreamError;
    co_await session.send_error(ctx, err);
    co_return;
  }
  http::UpstreamCall& call = **started;
  ctx.upstream_acquire = call.timings().acquire;
  ctx.upstream_first_byte = call.timings().first_byte;
  ctx.reused_connection = call.timings().reused_connection;
  const int status = call.status();
  const auto& settings = ctx.snapshot->config().server;

  if (status < 200 || status >= 300) {
    auto body = co_await call.read_all(1024 * 1024);
    ctx.outcome = Outcome::kUpstreamError;
    ctx.error = Error(ErrorKind::kUpstreamStatus, status,
                      "provider '" + provider.config->id + "' returned " + std::to_string(status));
    Response res = json_response(
        static_cast<bhttp::status>(status),
        error_body_for_caller(plan, body ? std::string_view(*body) : std::string_view(), status,
                              provider.config->id));
    if (auto ra = call.header("retry-after"); !ra.empty()) {
      res.set(bhttp::field::retry_after, ra);
    }
    co_await session.send(ctx, res);
    co_return;
  }

  const std::string_view content_type = call.header("content-type");
  const bool upstream_streams = content_type.starts_with("text/event-stream");
  if (!(plan.stream && upstream_streams)) {
    auto body = co_await call.read_all(settings.max_upstream_response_bytes);
    if (!body) {
      ctx.error = body.error();
      if (body.error().kind() == ErrorKind::kClientGone || session.client_gone()) {
        ctx.outcome = Outcome::kClientGone;
        ctx.status = 499;
        co_return;
      }
      ctx.outcome = Outcome::kUpstreamError;
      co_await session.send_error(ctx, body.error());
      co_return;
    }
    if (plan.stream) {
      // Asked for a stream, got a JSON body: relay it as it is for OpenAI callers (what
      // the provider sent), refuse to guess a stream for translated ones.
      if (plan.translate()) {
        ctx.outcome = Outcome::kUpstreamError;
        co_await session.send_error(ctx,
                                    Error(ErrorKind::kUpstreamProtocol,
                                          "provider '" + provider.config->id +
                                              "' answered a streaming request without a stream")
                                        .with_code("upstream_not_streaming"));
        co_return;
      }
    }
    co_await send_body(session, ctx, plan, std::move(*body), content_type);
    co_return;
  }
  auto transform = make_transform(plan);
  co_await relay_stream(session, ctx, *transform, cancel,
                        [&call](std::string& buf) { return call.read_some(buf); });
}

// The route for `alias`, or the error to answer with.
Result<const RouteRuntime*> resolve_route(RequestContext& ctx, const std::string& alias,
                                          config::RouteKind want) {
  const RouteRuntime* route = ctx.snapshot->find_route(alias);
  if (route == nullptr || route->config->kind != want) {
    return model_not_found(alias);
  }
  if (!Snapshot::key_allows(ctx.key, alias)) {
    return Error(ErrorKind::kForbidden,
                 "key '" + ctx.key->name + "' may not use model '" + alias + "'")
        .with_code("model_not_allowed")
        .with_param("model");
  }
  ctx.alias = alias;
  ctx.provider = route->provider->config->id;
  ctx.model = route->model;
  ctx.attempts = 1;
  return route;
}

// Builds the plan for the caller's body: OpenAI bodies are validated and spliced, Anthropic
// bodies decoded to the IR and encoded as an OpenAI request.
Result<std::pair<CallPlan, const RouteRuntime*>> plan_call(RequestContext& ctx, Request& req,
                                                           Endpoint endpoint) {
  CallPlan plan;
  plan.endpoint = endpoint;
  if (endpoint == Endpoint::kMessages) {
    anthropic::DecodeStats stats;
    auto decoded = anthropic::decode_request(req.body(), {}, &stats);
    ctx.ignored_fields = stats.ignored_fields;
    if (!decoded) {
      return decoded.error();
    }
    ctx.stream = plan.stream = decoded->stream;
    auto route = resolve_route(ctx, decoded->model, config::RouteKind::kChat);
    if (!route) {
      return route.error();
    }
    chat::EncodeOptions encode;
    encode.use_max_completion_tokens = (*route)->provider->config->max_completion_tokens;
    plan.upstream_body = chat::encode_request(*decoded, (*route)->model, plan.stream, encode);
    return std::pair{std::move(plan), *route};
  }
  auto decoded = endpoint == Endpoint::kChat ? chat::decode_chat_request(req.body())
                                             : chat::decode_embeddings_request(req.body());
  if (!decoded) {
    return decoded.error();
  }
  ctx.stream = plan.stream = decoded->stream && endpoint == Endpoint::kChat;
  plan.include_usage = decoded->include_usage;
  auto route = resolve_route(
      ctx, decoded->model,
      endpoint == Endpoint::kChat ? config::RouteKind::kChat : config::RouteKind::kEmbeddings);
  if (!route) {
    return route.error();
  }
  if ((*route)->provider->config->adapter != config::Adapter::kMock) {
    // Always meter streams: ask for usage even when the caller did not (stripped again).
    plan.upstream_body =
        chat::encode_upstream_body(*decoded, (*route)->model,
                                   /*force_include_usage=*/endpoint == Endpoint::kChat);
  }
  plan.chat_request.emplace(std::move(*decoded));
  return std::pair{std::move(plan), *route};
}

http::Awaitable<void> serve_model_call(Session& session, RequestContext& ctx, Request& req,
                                       Endpoint endpoint) {
  auto planned = plan_call(ctx, req, endpoint);
  if (!planned) {
    ctx.alias.clear();
    co_await session.send_error(ctx, planned.error());
    co_return;
  }
  auto& [plan, route] = *planned;
  if (route->provider->config->adapter == config::Adapter::kMock) {
    co_await serve_mock(session, ctx, plan, *route);
  } else {
    co_await serve_upstream(session, ctx, req, plan, *route);
  }
}

}  // namespace

Dialect dialect_for_target(std::string_view target) {
  const Route* route = find_route(path_of(target));
  return route != nullptr && route->endpoint == Endpoint::kMessages ? Dialect::kAnthropic
                                                                    : Dialect::kOpenAI;
}

std::optional<Error> check_before_body(Session& session, RequestContext& ctx,
                                       const RequestHeader& head) {
  ctx.snapshot = session.worker().snapshot_ptr();
  const Route* route = find_route(path_of(ctx.path));
  if (route == nullptr) {
    return Error(ErrorKind::kNotFound,
                 "no such endpoint: " + ctx.method + " " + std::string(path_of(ctx.path)))
        .with_code("not_found");
  }
  ctx.dialect = dialect_for_target(ctx.path);
  if (route->endpoint == Endpoint::kModels && head.find("anthropic-version") != head.end()) {
    ctx.dialect = Dialect::kAnthropic;  // an Anthropic SDK listing models
  }
  if (head.method() != route->method) {
    return Error(ErrorKind::kMethodNotAllowed,
                 "use " + std::string(sv(bhttp::to_string(route->method))) + " for " +
                     std::string(route->path))
        .with_code("method_not_allowed");
  }
  const config::Config& cfg = ctx.snapshot->config();
  if (route->needs_key && cfg.require_auth) {
    std::string_view presented = presented_key(head);
    if (presented.empty()) {
      return Error(ErrorKind::kUnauthorized,
                   "missing API key: send 'Authorization: Bearer <key>' or 'x-api-key: <key>'")
          .with_code("missing_api_key");
    }
    ctx.key = ctx.snapshot->authenticate(presented);
    if (ctx.key == nullptr) {
      return Error(ErrorKind::kUnauthorized, "invalid API key").with_code("invalid_api_key");
    }
    ctx.key_name = ctx.key->name;
  }
  if (auto it = head.find(bhttp::field::content_length); it != head.end()) {
    std::uint64_t declared = 0;
    std::string_view v = sv(it->value());
    for (char c : v) {
      declared = declared * 10 + static_cast<unsigned>(c - '0');  // Beast validated digits
      if (declared > cfg.server.max_body_bytes) {
        return Error(ErrorKind::kPayloadTooLarge,
                     "request body exceeds " + std::to_string(cfg.server.max_body_bytes) + " bytes")
            .with_code("request_too_large");
      }
    }
  }
  return std::nullopt;
}

http::Awaitable<void> dispatch(Session& session, RequestContext& ctx, Request& req) {
  const Route* route = find_route(path_of(ctx.path));
  switch (route->endpoint) {
    case Endpoint::kHealth: {
      Response res = json_response(bhttp::status::ok, R"({"status":"ok"})");
      co_await session.send(ctx, res);
      co_return;
    }
    case Endpoint::kReady: {
      const bool draining = session.worker().draining();
      Response res =
          draining
              ? json_response(bhttp::status::service_unavailable, R"({"status":"draining"})")
              : json_response(bhttp::status::ok, R"({"status":"ready","config_version":)" +
                                                     std::to_string(ctx.snapshot->version()) + "}");
      co_await session.send(ctx, res);
      co_return;
    }
    case Endpoint::kModels: {
      if (ctx.dialect == Dialect::kAnthropic) {
        // Anthropic's list shape (GET /v1/models with anthropic-version, what its SDKs send):
        // {"data":[{"type":"model","id","display_name","created_at"}],"has_more","first_id",
        // "last_id"}; one page holds every alias the key may use.
        std::string body;
        codec::JsonWriter w(body);
        w.ch('{').key("data").ch('[');
        const auto aliases = ctx.snapshot->aliases_for(ctx.key);
        for (std::size_t i = 0; i < aliases.size(); ++i) {
          w.raw(i == 0 ? "{" : ",{").key("type").string("model").ch(',');
          w.key("id").string(aliases[i]).ch(',').key("display_name").string(aliases[i]).ch(',');
          w.key("created_at").string("1970-01-01T00:00:00Z").ch('}');
        }
        w.ch(']').ch(',').key("has_more").boolean(false).ch(',').key("first_id");
        aliases.empty() ? w.null() : w.string(aliases.front());
        w.ch(',').key("last_id");
        aliases.empty() ? w.null() : w.string(aliases.back());
        w.ch('}');
        Response res = json_response(bhttp::status::ok, std::move(body));
        co_await session.send(ctx, res);
        co_return;
      }
      json::array data;
      for (std::string_view alias : ctx.snapshot->aliases_for(ctx.key)) {
        data.push_back(json::object{
            {"id", alias}, {"object", "model"}, {"created", 0}, {"owned_by", "sluice"}});
      }
      Response res = json_response(
          bhttp::status::ok, json::serialize(json::object{{"object", "list"}, {"data", data}}));
      co_await session.send(ctx, res);
      co_return;
    }
    case Endpoint::kChat:
    case Endpoint::kEmbeddings:
    case Endpoint::kMessages:
      co_await serve_model_call(session, ctx, req, route->endpoint);
      co_return;
    case Endpoint::kUnknown:
      break;
  }
  co_await session.send_error(ctx, Error(ErrorKind::kNotFound, "no such endpoint"));
}

}  // namespace sluice::server
