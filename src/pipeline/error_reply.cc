#include "pipeline/error_reply.h"

#include "protocol/ingress.h"
#include "protocol/registry.h"

namespace sluice::pipeline {

std::string_view should_retry(const Error& error) {
  if (error.code() == "insufficient_quota") {
    return "false";  // a budget resets with its period, not in seconds
  }
  switch (error.kind()) {
    case ErrorKind::kRateLimited:
    case ErrorKind::kUnavailable:
    case ErrorKind::kRequestTimeout:
    case ErrorKind::kUpstreamTimeout:
    case ErrorKind::kUpstreamUnreachable:
    case ErrorKind::kUpstreamProtocol:
      return "true";
    case ErrorKind::kUpstreamStatus: {
      if (error.code() == "upstream_auth_failed") {
        return "false";
      }
      const int s = error.http_status();
      return s == 408 || s == 409 || s == 429 || s >= 500 ? "true" : "false";
    }
    default:
      return "false";
  }
}

void add_standard_fields(const RequestContext& ctx, ResponseHead& head) {
  head.headers.add("x-request-id", ctx.request_id);
  if (const Attempt* last = ctx.last_attempt()) {
    head.headers.add("x-sluice-provider", last->provider);
    head.headers.add("x-sluice-model", last->model);
    head.headers.add("x-sluice-attempts", head.number(ctx.attempts.size()));
    if (!last->path.empty()) {
      head.headers.add("x-sluice-target", last->path);
    }
  }
  if (!ctx.dropped_tools.empty()) {
    head.headers.add("x-sluice-dropped-tools", ctx.dropped_tools);
  }
  head.headers.add("Server", "sluice");
  add_rate_limit_fields(ctx, head);
}

void add_rate_limit_fields(const RequestContext& ctx, ResponseHead& head) {
  limits::Ticket& t = ctx.limits;  // mutable: its header_text holds the values
  if (t.requests.limit != 0) {
    const limits::HeaderValues v = limits::header_values(t.requests, t.header_text[0]);
    head.headers.add("x-ratelimit-limit-requests", v.limit);
    head.headers.add("x-ratelimit-remaining-requests", v.remaining);
    head.headers.add("x-ratelimit-reset-requests", v.reset);
  }
  if (t.tokens.limit != 0) {
    const limits::HeaderValues v = limits::header_values(t.tokens, t.header_text[1]);
    head.headers.add("x-ratelimit-limit-tokens", v.limit);
    head.headers.add("x-ratelimit-remaining-tokens", v.remaining);
    head.headers.add("x-ratelimit-reset-tokens", v.reset);
  }
}

std::string error_response(const RequestContext& ctx, const Error& error, ResponseHead& head) {
  const protocol::IngressCodec& codec =
      ctx.ingress != nullptr ? *ctx.ingress : protocol::default_ingress();
  protocol::ErrorReply reply = codec.encode_error(error);
  head.status = reply.status;
  head.content_type = reply.content_type;
  add_standard_fields(ctx, head);
  head.headers.add("x-should-retry", should_retry(error));
  if (error.retry_after_seconds() > 0) {
    head.headers.add("Retry-After", head.number(error.retry_after_seconds()));
  }
  return std::move(reply.body);
}

Error model_not_found(std::string_view alias) {
  return Error(ErrorKind::kNotFound, "The model '" + std::string(alias) +
                                         "' does not exist or you do not have access to it.")
      .with_code("model_not_found")
      .with_param("model");
}

}  // namespace sluice::pipeline
