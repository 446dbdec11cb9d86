#include "pipeline/trace_observer.h"

#include <algorithm>

#include "config/config.h"
#include "observability/otlp_json.h"
#include "pipeline/snapshot.h"
#include "protocol/ingress.h"

namespace sluice::pipeline {

namespace {

using observability::SpanKind;
using observability::SpanStatus;
using observability::SpanWriter;
using std::chrono::duration_cast;
using std::chrono::microseconds;
using std::chrono::nanoseconds;

constexpr std::size_t kMaxStatusMessage = 256;

// gen_ai.provider.name for an adapter kind (GenAI semantic conventions' well-known values);
// OpenAI-compatible servers speak the openai flavour.
std::string_view provider_name(std::string_view adapter) {
  if (adapter == "gemini") {
    return "gcp.gemini";
  }
  if (adapter == "azure_openai") {
    return "azure.ai.openai";
  }
  if (adapter == "bedrock") {
    return "aws.bedrock";
  }
  return adapter;  // openai, anthropic, mock
}

const ProviderRuntime* find_provider(const RequestContext& ctx, std::string_view id) {
  for (const auto& provider : ctx.snapshot->providers()) {
    if (provider->config->id == id) {
      return provider.get();
    }
  }
  return nullptr;
}

double millis(microseconds us) { return static_cast<double>(us.count()) / 1000.0; }

std::string_view error_type(const Error& error) {
  return error.code().empty() ? to_string(error.kind()) : std::string_view(error.code());
}

std::string_view status_message(const Error& error) {
  return std::string_view(error.message()).substr(0, kMaxStatusMessage);
}

// The request's wall-clock start: the stamp the pipeline took, or (when none was taken) the
// end stamp less the steady-clock duration.
std::int64_t wall_start_ns(const RequestContext& ctx) {
  const auto wall = ctx.wall_started != std::chrono::system_clock::time_point{}
                        ? ctx.wall_started
                        : ctx.wall_ended - duration_cast<std::chrono::system_clock::duration>(
                                               ctx.ended - ctx.started);
  return duration_cast<nanoseconds>(wall.time_since_epoch()).count();
}

void usage_attributes(SpanWriter& span, const ir::Usage& usage) {
  span.integer("gen_ai.usage.input_tokens", static_cast<std::int64_t>(usage.input_tokens))
      .integer("gen_ai.usage.output_tokens", static_cast<std::int64_t>(usage.output_tokens));
  if (usage.cache_read_tokens > 0) {
    span.integer("gen_ai.usage.cache_read.input_tokens",
                 static_cast<std::int64_t>(usage.cache_read_tokens));
  }
  if (usage.cache_write_tokens > 0) {
    span.integer("gen_ai.usage.cache_creation.input_tokens",
                 static_cast<std::int64_t>(usage.cache_write_tokens));
  }
  if (usage.reasoning_tokens > 0) {
    span.integer("sluice.usage.reasoning_tokens",
                 static_cast<std::int64_t>(usage.reasoning_tokens));
  }
}

void server_genai_attributes(SpanWriter& span, const RequestContext& ctx,
                             std::string_view operation) {
  span.str("gen_ai.operation.name", operation);
  if (!ctx.alias.empty()) {
    span.str("gen_ai.request.model", ctx.alias);
  }
  if (const Attempt* last = ctx.last_attempt()) {
    if (const ProviderRuntime* provider = find_provider(ctx, last->provider)) {
      span.str("gen_ai.provider.name", provider_name(provider->config->adapter));
    }
    if (!last->model.empty()) {
      span.str("gen_ai.response.model", last->model);
    }
  }
  if (ctx.usage) {
    usage_attributes(span, *ctx.usage);
  }
  if (!ctx.finish_reason.empty()) {
    const std::string_view reasons[] = {ctx.finish_reason};
    span.strings("gen_ai.response.finish_reasons", reasons);
  }
}

void server_sluice_attributes(SpanWriter& span, const RequestContext& ctx,
                              std::string_view operation) {
  span.str("sluice.request_id", ctx.request_id);
  if (!ctx.alias.empty()) {
    span.str("sluice.alias", ctx.alias);
  }
  if (ctx.key != nullptr) {
    span.str("sluice.key", ctx.key->name);
  }
  if (!ctx.feature.empty()) {
    span.str("sluice.feature", ctx.feature);
  }
  if (!operation.empty()) {
    span.boolean("sluice.stream", ctx.stream);
  }
  span.str("sluice.outcome", to_string(ctx.outcome));
  span.integer("sluice.attempts", static_cast<std::int64_t>(ctx.attempts.size()));
  if (!ctx.retry_stop.empty()) {
    span.str("sluice.retry_stop", ctx.retry_stop);
  }
  if (ctx.first_token.count() >= 0) {
    span.real("sluice.ttft_ms", millis(ctx.first_token));
  }
  if (ctx.charge) {
    span.boolean("sluice.priced", ctx.charge->priced);
    if (ctx.charge->priced) {
      span.integer("sluice.cost_micros", ctx.charge->micros);
      span.str("sluice.currency", ctx.charge->currency);
    }
    if (!ctx.charge->price_version.empty()) {
      span.str("sluice.price_version", ctx.charge->price_version);
    }
  }
}

void finish_server_span(SpanWriter& span, const RequestContext& ctx) {
  // HTTP semantic conventions: a SERVER span is an error for 5xx only (4xx are the caller's);
  // a model call that broke after its 200 head failed too.
  const bool failed = ctx.status >= 500 || ctx.outcome == Outcome::kUpstreamError ||
                      ctx.outcome == Outcome::kMidstreamError;
  if (failed && ctx.error) {
    span.str("error.type", error_type(*ctx.error));
  } else if (failed) {
    span.str("error.type", std::to_string(ctx.status));
  }
  if (failed) {
    span.finish(SpanStatus::kError, ctx.error ? status_message(*ctx.error) : std::string_view());
  } else {
    span.finish(SpanStatus::kUnset);
  }
}

void server_span(const RequestContext& ctx, std::string_view operation, std::int64_t start_ns,
                 std::string& out) {
  const std::int64_t end_ns =
      start_ns + duration_cast<nanoseconds>(ctx.ended - ctx.started).count();
  std::string name;
  if (!operation.empty()) {
    name.append(operation);
    if (!ctx.alias.empty()) {
      name.append(" ").append(ctx.alias);
    }
  } else {
    name.append(ctx.method);
  }
  SpanWriter span(out, ctx.trace.trace, ctx.trace.span, ctx.trace.parent, name, SpanKind::kServer,
                  {start_ns, end_ns});
  span.str("http.request.method", ctx.method);
  span.str("url.path", std::string_view(ctx.path).substr(0, ctx.path.find('?')));
  if (ctx.status != 0) {
    span.integer("http.response.status_code", ctx.status);
  }
  if (!operation.empty()) {
    server_genai_attributes(span, ctx, operation);
  }
  server_sluice_attributes(span, ctx, operation);
  finish_server_span(span, ctx);
}

void attempt_sluice_attributes(SpanWriter& span, const Attempt& attempt) {
  span.str("sluice.provider", attempt.provider);
  if (!attempt.path.empty()) {
    span.str("sluice.attempt_path", attempt.path);
  }
  if (!attempt.breaker.empty()) {
    span.str("sluice.breaker", attempt.breaker);
  }
  if (attempt.backoff.count() > 0) {
    span.integer("sluice.backoff_ms", attempt.backoff.count());
  }
  span.boolean("sluice.passthrough", attempt.passthrough);
  span.boolean("sluice.reused_connection", attempt.reused_connection);
  if (attempt.acquire.count() >= 0) {
    span.real("sluice.acquire_ms", millis(attempt.acquire));
  }
  if (attempt.first_byte.count() >= 0) {
    span.real("sluice.first_byte_ms", millis(attempt.first_byte));
  }
}

void finish_client_span(SpanWriter& span, const Attempt& attempt) {
  // HTTP semantic conventions: a CLIENT span is an error for any 4xx or 5xx, or no answer.
  const bool failed = attempt.error.has_value() || attempt.status >= 400;
  if (attempt.error) {
    span.str("error.type", error_type(*attempt.error));
    span.finish(SpanStatus::kError, status_message(*attempt.error));
  } else if (failed) {
    span.str("error.type", std::to_string(attempt.status));
    span.finish(SpanStatus::kError);
  } else {
    span.finish(SpanStatus::kUnset);
  }
}

void client_span(const RequestContext& ctx, const Attempt& attempt, bool answered,
                 std::string_view operation, std::int64_t request_start_ns, std::string& out) {
  const std::int64_t request_end_ns =
      request_start_ns + duration_cast<nanoseconds>(ctx.ended - ctx.started).count();
  std::int64_t start_ns = request_start_ns;
  if (attempt.started.count() >= 0) {
    start_ns += duration_cast<nanoseconds>(attempt.started).count();
  }
  const std::int64_t end_ns = attempt.duration.count() >= 0
                                  ? start_ns + duration_cast<nanoseconds>(attempt.duration).count()
                                  : std::max(start_ns, request_end_ns);
  std::string name;
  name.append(operation.empty() ? std::string_view("GET") : operation);
  if (!attempt.model.empty()) {
    name.append(" ").append(attempt.model);
  }
  SpanWriter span(out, ctx.trace.trace, attempt.span, ctx.trace.span, name, SpanKind::kClient,
                  {start_ns, end_ns});
  span.str("http.request.method", operation.empty() ? "GET" : "POST");
  if (attempt.status != 0) {
    span.integer("http.response.status_code", attempt.status);
  }
  const ProviderRuntime* provider = find_provider(ctx, attempt.provider);
  if (provider != nullptr) {
    if (const providers::Endpoint* endpoint = provider->adapter->endpoint()) {
      span.str("server.address", endpoint->host).integer("server.port", endpoint->port);
    }
  }
  if (!operation.empty()) {
    span.str("gen_ai.operation.name", operation);
    if (provider != nullptr) {
      const std::string_view name = provider_name(provider->config->adapter);
      span.str("gen_ai.provider.name", name).str("gen_ai.system", name);
    }
    if (!attempt.model.empty()) {
      span.str("gen_ai.request.model", attempt.model);
    }
    if (answered) {
      if (!attempt.model.empty()) {
        span.str("gen_ai.response.model", attempt.model);
      }
      if (ctx.usage) {
        usage_attributes(span, *ctx.usage);
      }
      if (!ctx.finish_reason.empty()) {
        const std::string_view reasons[] = {ctx.finish_reason};
        span.strings("gen_ai.response.finish_reasons", reasons);
      }
    }
  }
  attempt_sluice_attributes(span, attempt);
  finish_client_span(span, attempt);
}

}  // namespace

void encode_request_spans(const RequestContext& ctx, std::vector<std::string>& out) {
  if (!ctx.trace.recording || ctx.endpoint == Endpoint::kHealth ||
      ctx.endpoint == Endpoint::kReady) {
    return;
  }
  const std::string_view operation = ctx.endpoint == Endpoint::kModelCall && ctx.ingress != nullptr
                                         ? protocol::to_string(ctx.ingress->operation())
                                         : std::string_view();
  const std::int64_t start_ns = wall_start_ns(ctx);
  out.emplace_back().reserve(1536);
  server_span(ctx, operation, start_ns, out.back());
  for (std::size_t i = 0; i < ctx.attempts.size(); ++i) {
    const Attempt& attempt = ctx.attempts[i];
    if (attempt.span == 0) {
      continue;
    }
    const bool answered = i + 1 == ctx.attempts.size() && !attempt.error && attempt.status >= 200 &&
                          attempt.status < 300;
    out.emplace_back().reserve(1024);
    client_span(ctx, attempt, answered, operation, start_ns, out.back());
  }
}

void TraceObserver::on_finish(const RequestContext& ctx) {
  if (!ctx.trace.recording) {
    return;
  }
  spans_.clear();
  encode_request_spans(ctx, spans_);
  for (std::string& span : spans_) {
    buffer_.push(worker_, std::move(span));
  }
}

}  // namespace sluice::pipeline
