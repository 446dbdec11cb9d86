#include "pipeline/pipeline.h"

#include "config/config.h"
#include "pipeline/error_reply.h"
#include "pipeline/model_call.h"
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
};

std::string_view path_of(std::string_view target) { return target.substr(0, target.find('?')); }

}  // namespace

Pipeline::Pipeline(PipelineParts parts) : parts_(parts) {
  if (parts_.clock == nullptr) {
    parts_.clock = &RealClock::instance();
  }
}

void Pipeline::begin(RequestContext& ctx) const {
  ctx.started = parts_.clock->now();
  ctx.snapshot = parts_.host->current_snapshot();
  ctx.worker = parts_.worker;
}

void Pipeline::on_request_line(RequestContext& ctx, std::string_view method,
                               std::string_view target) const {
  ctx.method = std::string(method);
  ctx.path = std::string(target);
  const std::string_view path = path_of(target);
  ctx.endpoint = Endpoint::kNone;
  ctx.ingress = protocol::find_ingress(path);
  if (ctx.ingress != nullptr) {
    ctx.endpoint = Endpoint::kModelCall;
    return;
  }
  for (const OpsEndpoint& op : kOps) {
    if (op.path == path) {
      ctx.endpoint = op.endpoint;
    }
  }
}

std::optional<Error> Pipeline::on_head(RequestContext& ctx, const codec::RequestHead& head) const {
  on_request_line(ctx, head.method(), head.target());
  std::string_view method = "POST";
  bool needs_key = true;
  if (ctx.endpoint == Endpoint::kModelCall) {
    method = ctx.ingress->method();
  } else {
    const std::string_view path = head.path();
    const OpsEndpoint* op = nullptr;
    for (const OpsEndpoint& candidate : kOps) {
      if (candidate.path == path) {
        op = &candidate;
      }
    }
    if (op == nullptr) {
      return Error(ErrorKind::kNotFound,
                   "no such endpoint: " + ctx.method + " " + std::string(path))
          .with_code("not_found");
    }
    method = op->method;
    needs_key = op->needs_key;
    if (ctx.endpoint == Endpoint::kModels) {
      // GET /v1/models is shared: the protocol that claims it answers in its list shape.
      for (const protocol::IngressCodec* codec : protocol::ingress_codecs()) {
        if (codec->claims_model_listing(head)) {
          ctx.ingress = codec;
          break;
        }
      }
    }
  }
  if (head.method() != method) {
    return Error(ErrorKind::kMethodNotAllowed,
                 "use " + std::string(method) + " for " + std::string(head.path()))
        .with_code("method_not_allowed");
  }
  const config::Config& cfg = ctx.snapshot->config();
  if (needs_key && cfg.require_auth) {
    const protocol::IngressCodec& codec =
        ctx.ingress != nullptr ? *ctx.ingress : protocol::default_ingress();
    const std::string_view presented = codec.credential(head);
    if (presented.empty()) {
      return Error(ErrorKind::kUnauthorized,
                   "missing API key: send 'Authorization: Bearer <key>' or 'x-api-key: <key>'")
          .with_code("missing_api_key");
    }
    ctx.key = ctx.snapshot->authenticate(presented);
    if (ctx.key == nullptr) {
      return Error(ErrorKind::kUnauthorized, "invalid API key").with_code("invalid_api_key");
    }
  }
  if (head.has_header("content-length")) {
    // The transport validated the digits (and rejected lists and conflicts).
    std::uint64_t declared = 0;
    for (char c : head.header("content-length")) {
      declared = declared * 10 + static_cast<unsigned>(c - '0');
      if (declared > cfg.server.max_body_bytes) {
        return Error(ErrorKind::kPayloadTooLarge, "request body exceeds " +
                                                      std::to_string(cfg.server.max_body_bytes) +
                                                      " bytes")
            .with_code("request_too_large");
      }
    }
  }
  return std::nullopt;
}

Awaitable<void> Pipeline::serve(RequestContext& ctx, const codec::RequestHead& head,
                                std::string_view body, Downstream& downstream) const {
  switch (ctx.endpoint) {
    case Endpoint::kHealth: {
      ResponseHead res;
      add_standard_fields(ctx, res);
      co_await downstream.send(ctx, res, R"({"status":"ok"})");
      co_return;
    }
    case Endpoint::kReady: {
      ResponseHead res;
      add_standard_fields(ctx, res);
      if (parts_.host->draining()) {
        res.status = 503;
        co_await downstream.send(ctx, res, R"({"status":"draining"})");
        co_return;
      }
      const std::string body_text = R"({"status":"ready","config_version":)" +
                                    std::to_string(ctx.snapshot->version()) + "}";
      co_await downstream.send(ctx, res, body_text);
      co_return;
    }
    case Endpoint::kModels: {
      const protocol::IngressCodec& codec =
          ctx.ingress != nullptr ? *ctx.ingress : protocol::default_ingress();
      const std::vector<std::string_view> aliases = ctx.snapshot->aliases_for(ctx.key);
      ResponseHead res;
      add_standard_fields(ctx, res);
      co_await downstream.send(ctx, res, codec.encode_model_list(aliases));
      co_return;
    }
    case Endpoint::kModelCall: {
      ModelCall call(*this, ctx, head, downstream);
      co_await call.run(body);
      co_return;
    }
    case Endpoint::kNone:
      break;
  }
  co_await reject(ctx, Error(ErrorKind::kNotFound, "no such endpoint").with_code("not_found"),
                  downstream);
}

Awaitable<void> Pipeline::reject(RequestContext& ctx, const Error& error,
                                 Downstream& downstream) const {
  ctx.error = error;
  ResponseHead head;
  const std::string body = error_response(ctx, error, head);
  co_await downstream.send(ctx, head, body);
}

void Pipeline::end(RequestContext& ctx) const {
  ctx.ended = parts_.clock->now();
  ctx.wall_ended = parts_.clock->wall_now();
  for (RequestObserver* observer : parts_.observers) {
    observer->on_finish(ctx);
  }
}

}  // namespace sluice::pipeline
