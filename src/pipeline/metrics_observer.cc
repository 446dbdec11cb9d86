#include "pipeline/metrics_observer.h"

#include <algorithm>
#include <array>
#include <chrono>

#include "config/config.h"

namespace sluice::pipeline {

namespace obs = observability;

namespace {

using Seconds = std::chrono::duration<double>;

// Buckets in seconds (Prometheus' base unit). Overhead is what the gateway adds around the
// upstream (sub-millisecond when healthy); first byte and first token span a fast small model
// on a warm connection to a reasoning model thinking for a minute; totals reach the longest
// streams a route allows by default.
const std::vector<double> kOverheadBuckets = {0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005,
                                              0.01,   0.025,   0.05,   0.1,   0.25,   1};
const std::vector<double> kLatencyBuckets = {0.025, 0.05, 0.1, 0.25, 0.5, 1,  2.5,
                                             5,     10,   20,  30,   60,  120};
const std::vector<double> kDurationBuckets = {0.05, 0.1, 0.25, 0.5, 1,   2.5, 5,
                                              10,   20,  30,   60,  120, 300, 600};
const std::vector<double> kRateBuckets = {1, 5, 10, 20, 35, 50, 75, 100, 150, 250, 500, 1000};

obs::FamilySpec spec(std::string name, std::string help, std::vector<std::string> labels,
                     obs::MetricType type = obs::MetricType::kCounter,
                     std::vector<double> buckets = {}) {
  obs::FamilySpec s;
  s.name = std::move(name);
  s.help = std::move(help);
  s.type = type;
  s.labels = std::move(labels);
  s.buckets = std::move(buckets);
  return s;
}

obs::FamilySpec histogram(std::string name, std::string help, std::vector<std::string> labels,
                          const std::vector<double>& buckets) {
  return spec(std::move(name), std::move(help), std::move(labels), obs::MetricType::kHistogram,
              buckets);
}

double seconds(std::chrono::microseconds d) { return Seconds(d).count(); }

// The cells of sluice_schema_drift_total's `kind`, in the order of its fixed values.
enum DriftKind : std::size_t { kAnswerUnknown, kRequestIgnored, kEventDropped };

std::string_view key_name(const RequestContext& ctx) {
  return ctx.key != nullptr ? std::string_view(ctx.key->name) : std::string_view();
}

}  // namespace

std::string_view status_label(int status) {
  // "000" .. "999", built once; a status is three digits or it is not HTTP.
  static const std::array<std::array<char, 4>, 1000> kText = [] {
    std::array<std::array<char, 4>, 1000> t{};
    for (int i = 0; i < 1000; ++i) {
      t[i] = {static_cast<char>('0' + i / 100), static_cast<char>('0' + i / 10 % 10),
              static_cast<char>('0' + i % 10), '\0'};
    }
    return t;
  }();
  if (status == 0) {
    return "0";
  }
  if (status < 100 || status > 999) {
    return "other";
  }
  return std::string_view(kText[status].data(), 3);
}

std::string_view attempt_result(const Attempt& attempt) {
  if (attempt.error && attempt.error->kind() != ErrorKind::kUpstreamStatus) {
    return to_string(attempt.error->kind());
  }
  const int s = attempt.status;
  if (s == 429) {
    return "429";
  }
  if (s >= 200 && s < 300) {
    return "2xx";
  }
  if (s >= 400 && s < 500) {
    return "4xx";
  }
  if (s >= 500 && s < 600) {
    return "5xx";
  }
  return attempt.error ? to_string(attempt.error->kind()) : std::string_view("other");
}

RequestMetrics RequestMetrics::register_in(obs::MetricsRegistry& registry) {
  RequestMetrics m;
  m.requests = registry.add(
      spec("sluice_requests_total",
           "Requests answered, by alias, the provider and model that served the last attempt, the "
           "HTTP status sent to the caller and the outcome of the model call.",
           {"alias", "provider", "model", "status", "outcome"}));
  m.attempts = registry.add(
      spec("sluice_upstream_attempts_total",
           "Upstream attempts by target and result (status class, or the error kind when no "
           "answer came or the stream broke).",
           {"provider", "model", "result"}));
  m.retries = registry.add(
      spec("sluice_upstream_retries_total",
           "Attempts after the first, by the failed target, why it failed (its result) and "
           "whether the next attempt went to the same target (retry) or another (failover).",
           {"provider", "model", "reason", "kind"}));
  m.cache = registry.add(
      spec("sluice_cache_requests_total",
           "Requests of routes with an answer cache, by alias and what the cache did: hit, stale, "
           "miss, refresh, coalesced (followed an identical call in flight) or bypass.",
           {"alias", "result"}));
  m.cache_saved = registry.add(
      spec("sluice_cache_saved_tokens_total",
           "Upstream tokens (input plus output, as the original call reported them) that answers "
           "from the cache and followers of shared calls did not pay for, by alias.",
           {"alias"}));
  m.guardrails = registry.add(
      spec("sluice_guardrail_findings_total",
           "What the guardrails found, by alias, policy, detector, what was done (flag, redact, "
           "block) and where (input: the request; output: the answer). Never the text.",
           {"alias", "policy", "detector", "action", "direction"}));
  m.retry_stops = registry.add(
      spec("sluice_retry_stops_total",
           "Requests whose last attempt failed and no further attempt followed, by why not.",
           {"reason"}));
  obs::FamilySpec tokens =
      spec("sluice_tokens_total",
           "Tokens as the upstream reported them, by gateway key and model; cache_read and "
           "cache_write are part of input, reasoning part of output.",
           {"key", "model"});
  tokens.fixed_label = "type";
  tokens.fixed_values = {"input", "output", "cache_read", "cache_write", "reasoning"};
  m.tokens = registry.add(std::move(tokens));
  m.cost = registry.add(
      spec("sluice_cost_micros_total",
           "Cost of priced requests in millionths of the currency unit, by key and model.",
           {"key", "model", "currency"}));
  m.unaccounted = registry.add(
      spec("sluice_unaccounted_requests_total",
           "Model calls with no price in the catalogue (recorded as unaccounted, not as free).",
           {"key", "model"}));
  obs::FamilySpec drift = spec(
      "sluice_schema_drift_total",
      "Schema drift by provider: fields and event types in its answers that its decoder does "
      "not know (answer_unknown, per attempt), caller request fields the translation for it "
      "could not carry (request_ignored) and upstream events or parts the caller's protocol "
      "has no place for (event_dropped). Translated requests only: passthrough is not decoded.",
      {"provider"});
  drift.fixed_label = "kind";
  drift.fixed_values = {"answer_unknown", "request_ignored", "event_dropped"};
  m.drift = registry.add(std::move(drift));
  m.overhead = registry.add(
      histogram("sluice_gateway_overhead_seconds",
                "Time a model call spent in the gateway itself: total minus upstream attempts and "
                "backoff waits.",
                {}, kOverheadBuckets));
  m.ttfb = registry.add(histogram("sluice_upstream_time_to_first_byte_seconds",
                                  "Per attempt: request written to the upstream's response head.",
                                  {"provider", "model"}, kLatencyBuckets));
  m.ttft = registry.add(
      histogram("sluice_time_to_first_token_seconds",
                "Streams: request arrival to the first content token sent to the caller.",
                {"provider", "model"}, kLatencyBuckets));
  m.output_rate = registry.add(
      histogram("sluice_output_tokens_per_second",
                "Output tokens over generation time (first token to end for streams, the answering "
                "attempt's duration otherwise).",
                {"provider", "model"}, kRateBuckets));
  m.duration = registry.add(histogram("sluice_request_duration_seconds",
                                      "Whole requests, first byte in to last byte out.", {"alias"},
                                      kDurationBuckets));
  m.in_flight = registry.add(spec("sluice_requests_in_flight",
                                  "Requests being received or served (first byte in to end).", {},
                                  obs::MetricType::kGauge));
  return m;
}

void MetricsObserver::on_attempt(const RequestContext& ctx, const Attempt& attempt) {
  const std::string_view result = attempt_result(attempt);
  shard_.at(families_.attempts, {attempt.provider, attempt.model, result}).add(1);
  if (attempt.first_byte.count() >= 0) {
    shard_.at(families_.ttfb, {attempt.provider, attempt.model})
        .observe(seconds(attempt.first_byte));
  }
  if (ctx.attempts.size() >= 2 && &attempt == &ctx.attempts.back()) {
    const Attempt& failed = ctx.attempts[ctx.attempts.size() - 2];
    const std::string_view kind = failed.path == attempt.path ? "retry" : "failover";
    shard_.at(families_.retries, {failed.provider, failed.model, attempt_result(failed), kind})
        .add(1);
  }
}

// Counted at the end, not per attempt: a stream's decoder reports its unknown names only when
// the stream is over.
void MetricsObserver::count_drift(const RequestContext& ctx, std::string_view provider) {
  for (const Attempt& a : ctx.attempts) {
    if (a.unknown_fields > 0) {
      shard_.at(families_.drift, {a.provider}).add(a.unknown_fields, kAnswerUnknown);
    }
  }
  if (ctx.ignored_fields > 0 || ctx.dropped_events > 0) {
    obs::Series& s = shard_.at(families_.drift, {provider});
    s.add(ctx.ignored_fields, kRequestIgnored);
    s.add(ctx.dropped_events, kEventDropped);
  }
}

void MetricsObserver::on_finish(const RequestContext& ctx) {
  using std::chrono::duration_cast;
  using std::chrono::microseconds;
  const Attempt* last = ctx.last_attempt();
  const std::string_view provider = last != nullptr ? last->provider : std::string_view();
  const std::string_view model = last != nullptr ? last->model : std::string_view();
  shard_
      .at(families_.requests,
          {ctx.alias, provider, model, status_label(ctx.status), to_string(ctx.outcome)})
      .add(1);
  const auto total = duration_cast<microseconds>(ctx.ended - ctx.started);
  if (!ctx.alias.empty()) {
    shard_.at(families_.duration, {ctx.alias}).observe(seconds(total));
  }
  if (!ctx.retry_stop.empty()) {
    shard_.at(families_.retry_stops, {ctx.retry_stop}).add(1);
  }
  if (!ctx.cache.empty()) {
    shard_.at(families_.cache, {ctx.alias, ctx.cache}).add(1);
    if (ctx.cache_saved_tokens > 0) {
      shard_.at(families_.cache_saved, {ctx.alias}).add(ctx.cache_saved_tokens);
    }
  }
  for (const GuardrailFind& f : ctx.guardrails) {
    shard_
        .at(families_.guardrails,
            {ctx.alias, f.policy, f.detector, f.action, f.output ? "output" : "input"})
        .add(f.count);
  }
  count_drift(ctx, provider);
  if (last == nullptr) {
    return;  // no model call reached an upstream
  }
  microseconds upstream{0};
  for (const Attempt& a : ctx.attempts) {
    upstream += std::max(a.duration, microseconds{0}) + duration_cast<microseconds>(a.backoff);
  }
  shard_.at(families_.overhead, {}).observe(seconds(std::max(total - upstream, microseconds{0})));

  const std::string_view key = key_name(ctx);
  if (ctx.usage) {
    const ir::Usage& u = *ctx.usage;
    obs::Series& tokens = shard_.at(families_.tokens, {key, model});
    tokens.add(u.input_tokens, 0);
    tokens.add(u.output_tokens, 1);
    tokens.add(u.cache_read_tokens, 2);
    tokens.add(u.cache_write_tokens, 3);
    tokens.add(u.reasoning_tokens, 4);
    // Generation time: after the first token for streams, the answering attempt otherwise.
    microseconds generating = last->duration;
    if (ctx.first_token.count() >= 0) {
      generating = total - ctx.first_token;
    }
    if (u.output_tokens > 0 && generating.count() > 0) {
      shard_.at(families_.output_rate, {provider, model})
          .observe(static_cast<double>(u.output_tokens) / seconds(generating));
    }
  }
  if (ctx.first_token.count() >= 0) {
    shard_.at(families_.ttft, {provider, model}).observe(seconds(ctx.first_token));
  }
  if (ctx.charge) {
    if (ctx.charge->priced) {
      shard_.at(families_.cost, {key, model, ctx.charge->currency})
          .add(static_cast<std::uint64_t>(std::max<std::int64_t>(ctx.charge->micros, 0)));
    } else {
      shard_.at(families_.unaccounted, {key, model}).add(1);
    }
  }
}

}  // namespace sluice::pipeline
