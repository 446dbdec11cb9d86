#include "server/handlers.h"

#include <boost/beast/http/empty_body.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

#include "codec/sse.h"
#include "http/upstream_call.h"
#include "protocol/openai_chat/chat_request.h"
#include "protocol/openai_chat/errors.h"
#include "protocol/openai_chat/stream_monitor.h"
#include "providers/mock_provider.h"
#include "server/snapshot.h"
#include "server/worker.h"

namespace sluice::server {
namespace json = boost::json;
namespace chat = protocol::openai_chat;
namespace net = http::net;
using Clock = std::chrono::steady_clock;

namespace {

enum class Endpoint { kUnknown, kHealth, kReady, kModels, kChat, kEmbeddings };

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
std::string_view presented_key(const bhttp::request_header<>& head) {
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

// True when an SSE block ends with an empty line (its last line terminator is preceded by
// another one).
bool block_terminated(std::string_view raw) {
  if (raw.ends_with("\r\n")) {
    raw.remove_suffix(2);
  } else if (raw.ends_with('\n') || raw.ends_with('\r')) {
    raw.remove_suffix(1);
  } else {
    return false;
  }
  return raw.ends_with('\n') || raw.ends_with('\r');
}

// Relays an SSE body from `next` to the client as it arrives: one write per upstream read,
// no buffering beyond the event being assembled. `strip_usage` drops the usage-only chunk
// the gateway asked for on the caller's behalf. A stream that ends without [DONE] or
// breaks gets an explicit error event, never a silent truncation.
template <class Next>
http::Awaitable<void> relay_stream(Session& session, RequestContext& ctx, bool strip_usage,
                                   http::CancelToken& cancel, Next next) {
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
  chat::StreamMonitor monitor(strip_usage);
  std::string in;
  std::string out;
  std::optional<Error> failure;
  bool client_gone = false;
  auto forward_events = [&](codec::SseParser::Status status, codec::SseEvent& ev, bool at_end) {
    while (status == codec::SseParser::Status::kEvent) {
      if (monitor.on_event(ev) == chat::StreamMonitor::Action::kForward) {
        out.append(ev.raw);
        if (at_end && !block_terminated(ev.raw)) {
          // The upstream's last block lacked its blank line; terminate it so whatever
          // follows (an error event) stays a separate event.
          out.append(ev.raw.ends_with('\n') || ev.raw.ends_with('\r') ? "\n" : "\n\n");
        }
      }
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
    if (*n == 0 || failure) {
      break;
    }
  }
  ctx.usage = monitor.usage();
  ctx.finish_reason = monitor.finish_reason();
  ctx.events = monitor.events();
  if (failure && failure->kind() == ErrorKind::kClientGone) {
    client_gone = true;
  }
  if (client_gone || session.client_gone()) {
    ctx.outcome = Outcome::kClientGone;
    ctx.error = Error(ErrorKind::kClientGone, "client disconnected during the stream");
    co_return;
  }
  if (!failure && !monitor.done()) {
    failure = Error(ErrorKind::kUpstreamProtocol, "upstream stream ended before [DONE]")
                  .with_code("upstream_stream_truncated");
  }
  if (failure) {
    cancel.cancel();
    ctx.outcome = Outcome::kMidstreamError;
    ctx.error = failure;
    std::string event;
    codec::append_data_event(event, chat::encode_error(*failure));
    const bool sent = co_await session.send_chunk(ctx, event);
    if (!sent) {
      co_return;
    }
  } else {
    ctx.outcome = ctx.finish_reason == "length" ? Outcome::kTruncated : Outcome::kComplete;
  }
  co_await session.send_last_chunk(ctx);
}

http::Awaitable<void> serve_mock(Session& session, RequestContext& ctx, chat::ChatRequest& request,
                                 const RouteRuntime& route, Endpoint endpoint) {
  const config::Provider& provider = *route.provider->config;
  providers::MockReply reply =
      endpoint == Endpoint::kChat
          ? providers::mock_chat(request, route.model)
          : providers::mock_embeddings(request, route.model, provider.mock_embedding_dimensions);
  if (!request.stream || endpoint != Endpoint::kChat) {
    ctx.usage = chat::usage_from_response(reply.body);
    ctx.outcome = Outcome::kComplete;
    Response res = json_response(static_cast<bhttp::status>(reply.status), std::move(reply.body));
    co_await session.send(ctx, res);
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
  co_await relay_stream(session, ctx, !request.include_usage, cancel,
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
                                     chat::ChatRequest& request, const RouteRuntime& route,
                                     Endpoint endpoint) {
  const ProviderRuntime& provider = *route.provider;
  const bool is_chat = endpoint == Endpoint::kChat;
  http::UpstreamRequest up;
  up.target = provider.url.path_prefix + (is_chat ? "/chat/completions" : "/embeddings");
  up.host_header = provider.url.host_header;
  up.headers = provider.headers;
  up.headers.emplace_back("Content-Type", "application/json");
  up.headers.emplace_back("Accept", request.stream ? "text/event-stream" : "application/json");
  up.headers.emplace_back("x-request-id", ctx.request_id);
  const auto& forward = provider.config->forward_headers;
  if (!forward.empty()) {
    for (const auto& field : req) {
      std::string_view name = sv(field.name_string());
      if (header_forwarded(name, forward)) {
        up.headers.emplace_back(std::string(name), std::string(sv(field.value())));
      }
    }
  }
  // Always meter streams: ask for usage even when the caller did not (stripped again below).
  up.body = chat::encode_upstream_body(request, route.model, /*force_include_usage=*/is_chat);

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
    std::string normalised = chat::normalise_upstream_error(
        body ? std::string_view(*body) : std::string_view(), status, provider.config->id);
    ctx.outcome = Outcome::kUpstreamError;
    ctx.error = Error(ErrorKind::kUpstreamStatus, status,
                      "provider '" + provider.config->id + "' returned " + std::to_string(status));
    Response res = json_response(static_cast<bhttp::status>(status), std::move(normalised));
    if (auto ra = call.header("retry-after"); !ra.empty()) {
      res.set(bhttp::field::retry_after, ra);
    }
    co_await session.send(ctx, res);
    co_return;
  }

  const std::string_view content_type = call.header("content-type");
  const bool upstream_streams = content_type.starts_with("text/event-stream");
  if (!(request.stream && upstream_streams)) {
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
    ctx.usage = chat::usage_from_response(*body);
    ctx.outcome = Outcome::kComplete;
    Response res = json_response(bhttp::status::ok, std::move(*body));
    if (!content_type.empty()) {
      res.set(bhttp::field::content_type, content_type);
    }
    co_await session.send(ctx, res);
    co_return;
  }
  co_await relay_stream(session, ctx, !request.include_usage, cancel,
                        [&call](std::string& buf) { return call.read_some(buf); });
}

http::Awaitable<void> serve_model_call(Session& session, RequestContext& ctx, Request& req,
                                       Endpoint endpoint) {
  auto decoded = endpoint == Endpoint::kChat ? chat::decode_chat_request(req.body())
                                             : chat::decode_embeddings_request(req.body());
  if (!decoded) {
    co_await session.send_error(ctx, decoded.error());
    co_return;
  }
  chat::ChatRequest& request = *decoded;
  ctx.alias = request.model;
  ctx.stream = request.stream;
  const RouteRuntime* route = ctx.snapshot->find_route(request.model);
  const config::RouteKind want =
      endpoint == Endpoint::kChat ? config::RouteKind::kChat : config::RouteKind::kEmbeddings;
  if (route == nullptr || route->config->kind != want) {
    ctx.alias.clear();
    co_await session.send_error(ctx, model_not_found(request.model));
    co_return;
  }
  if (!Snapshot::key_allows(ctx.key, request.model)) {
    ctx.alias.clear();
    co_await session.send_error(
        ctx, Error(ErrorKind::kForbidden,
                   "key '" + ctx.key->name + "' may not use model '" + request.model + "'")
                 .with_code("model_not_allowed")
                 .with_param("model"));
    co_return;
  }
  ctx.provider = route->provider->config->id;
  ctx.model = route->model;
  ctx.attempts = 1;
  if (route->provider->config->adapter == config::Adapter::kMock) {
    co_await serve_mock(session, ctx, request, *route, endpoint);
  } else {
    co_await serve_upstream(session, ctx, req, request, *route, endpoint);
  }
}

}  // namespace

std::optional<Error> check_before_body(Session& session, RequestContext& ctx,
                                       const bhttp::request_header<>& head) {
  ctx.snapshot = session.worker().snapshot_ptr();
  const Route* route = find_route(path_of(ctx.path));
  if (route == nullptr) {
    return Error(ErrorKind::kNotFound,
                 "no such endpoint: " + ctx.method + " " + std::string(path_of(ctx.path)))
        .with_code("not_found");
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
      return Error(ErrorKind::kUnauthorized, "missing API key: send 'Authorization: Bearer <key>'")
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
      co_await serve_model_call(session, ctx, req, route->endpoint);
      co_return;
    case Endpoint::kUnknown:
      break;
  }
  co_await session.send_error(ctx, Error(ErrorKind::kNotFound, "no such endpoint"));
}

}  // namespace sluice::server
