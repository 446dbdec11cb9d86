#include "pipeline/usage_observer.h"

#include <charconv>

#include "config/config.h"
#include "pipeline/snapshot.h"
#include "protocol/ingress.h"

namespace sluice::pipeline {

namespace {

using std::chrono::duration_cast;
using std::chrono::microseconds;
using std::chrono::milliseconds;

std::int64_t unix_ms(std::chrono::system_clock::time_point t) {
  return duration_cast<milliseconds>(t.time_since_epoch()).count();
}

std::string error_class(const std::optional<Error>& error) {
  return error ? std::string(to_string(error->kind())) : std::string();
}

// The five outcomes of a model call. A request that failed over and was then refused by the
// gateway (say, a request the next target's protocol cannot carry) failed before anything was
// sent: upstream_error, with the refusal as its error class.
std::string_view outcome_name(Outcome outcome) {
  return outcome == Outcome::kNone ? to_string(Outcome::kUpstreamError) : to_string(outcome);
}

std::string_view adapter_of(const RequestContext& ctx, std::string_view provider) {
  if (ctx.snapshot == nullptr) {
    return {};
  }
  for (const auto& p : ctx.snapshot->providers()) {
    if (p->config->id == provider) {
      return p->config->adapter;
    }
  }
  return {};
}

}  // namespace

bool gets_usage_record(const RequestContext& ctx) {
  return ctx.endpoint == Endpoint::kModelCall &&
         (!ctx.attempts.empty() || ctx.outcome != Outcome::kNone);
}

std::string bounded_feature(std::string_view value, std::size_t max_length) {
  std::string out(value.substr(0, max_length));
  for (char& c : out) {
    if (c < 0x21 || c > 0x7E) {
      c = '_';
    }
  }
  return out;
}

metering::ChargeInput charge_input(const RequestContext& ctx) {
  metering::ChargeInput in;
  if (const Attempt* last = ctx.last_attempt()) {
    in.provider = last->provider;
    in.adapter = adapter_of(ctx, last->provider);
    in.model = last->model;
  } else if (!ctx.cached_provider.empty()) {
    in.provider = ctx.cached_provider;
    in.adapter = adapter_of(ctx, ctx.cached_provider);
    in.model = ctx.cached_model;
  }
  in.operation = ctx.ingress != nullptr ? protocol::to_string(ctx.ingress->operation()) : "";
  in.usage_reported = ctx.usage.has_value();
  in.usage = ctx.usage.value_or(ir::Usage{});
  if (ctx.outcome == Outcome::kCacheHit || ctx.outcome == Outcome::kCoalesced ||
      ctx.outcome == Outcome::kReplayed) {
    // No upstream call: priced as what it is, zero tokens of the model that made the answer.
    in.usage_reported = true;
    in.usage = ir::Usage{};
  }
  in.entered_at_ms = unix_ms(ctx.wall_started);
  return in;
}

namespace {

// Each attempt's record; what the attempts spent, for the latency split.
struct AttemptTotals {
  std::int64_t upstream_us = 0;
  std::int64_t backoff_us = 0;
  std::int64_t acquire_us = 0;
};

AttemptTotals fill_attempts(const RequestContext& ctx, store::UsageRecord& r) {
  AttemptTotals t;
  r.attempts.resize(ctx.attempts.size());
  for (std::size_t i = 0; i < ctx.attempts.size(); ++i) {
    const Attempt& a = ctx.attempts[i];
    store::AttemptRecord& out = r.attempts[i];
    out.provider.assign(a.provider);
    out.model.assign(a.model);
    out.path.assign(a.path);
    out.status = a.status;
    out.error_class.assign(error_class(a.error));
    out.acquire_us = a.acquire.count();
    out.first_byte_us = a.first_byte.count();
    out.duration_us = a.duration.count();
    out.backoff_ms = a.backoff.count();
    out.reused_connection = a.reused_connection;
    t.upstream_us += std::max<std::int64_t>(0, a.duration.count());
    t.acquire_us += std::max<std::int64_t>(0, a.acquire.count());
    t.backoff_us += duration_cast<microseconds>(a.backoff).count();
  }
  return t;
}

void fill_timings(const RequestContext& ctx, const AttemptTotals& t, store::UsageRecord& r) {
  const Attempt* answered = ctx.last_attempt();
  r.upstream_ttfb_us = answered != nullptr ? answered->first_byte.count() : -1;
  const std::int64_t total = duration_cast<microseconds>(ctx.ended - ctx.started).count();
  r.total_us = total;
  r.overhead_us = std::max<std::int64_t>(0, total - t.upstream_us - t.backoff_us);
  r.queue_us = t.backoff_us + t.acquire_us;
  r.ttft_us = ctx.stream && ctx.first_token.count() >= 0 ? ctx.first_token.count() : -1;
  std::int64_t generation_us = -1;
  if (r.ttft_us >= 0) {
    generation_us = total - r.ttft_us;
  } else if (answered != nullptr) {
    generation_us = answered->duration.count();
  }
  r.output_tokens_per_s_milli = -1;
  if (ctx.usage && ctx.usage->output_tokens > 0 && generation_us > 0) {
    r.output_tokens_per_s_milli = static_cast<std::int64_t>(
        ctx.usage->output_tokens * 1'000'000'000ULL / static_cast<std::uint64_t>(generation_us));
  }
}

void fill_charge(const RequestContext& ctx, store::UsageRecord& r) {
  if (ctx.charge) {
    r.priced = ctx.charge->priced;
    r.price_version.assign(ctx.charge->price_version);
    r.currency.assign(ctx.charge->currency);
    r.cost_micros = ctx.charge->micros;
    r.cost_items.assign(ctx.charge->items_json);
    r.saved_cost_micros =
        ctx.saved_charge && ctx.saved_charge->priced ? ctx.saved_charge->micros : 0;
  } else {  // a record's defaults: unaccounted
    static const store::UsageRecord unpriced;
    r.priced = unpriced.priced;
    r.price_version.assign(unpriced.price_version);
    r.currency.assign(unpriced.currency);
    r.cost_micros = unpriced.cost_micros;
    r.cost_items.assign(unpriced.cost_items);
    r.saved_cost_micros = 0;
  }
}

}  // namespace

void fill_usage_record(const RequestContext& ctx, std::string_view record_id,
                       store::UsageRecord& r) {
  // Every field is assigned in every case, strings by assign (their buffers reused).
  r.record_id.assign(record_id);
  r.request_id.assign(ctx.request_id);
  r.started_at_ms = unix_ms(ctx.wall_started);
  r.ended_at_ms = unix_ms(ctx.wall_ended);
  r.key_name.assign(ctx.key != nullptr ? std::string_view(ctx.key->name) : std::string_view());
  r.key_id.assign(ctx.key != nullptr ? std::string_view(ctx.key->id) : std::string_view());
  r.key_group.assign(ctx.key != nullptr ? std::string_view(ctx.key->group) : std::string_view());
  r.tenant.clear();
  r.feature.assign(ctx.feature);
  r.ingress.assign(ctx.ingress != nullptr ? ctx.ingress->protocol() : std::string_view());
  r.operation.assign(ctx.ingress != nullptr ? protocol::to_string(ctx.ingress->operation())
                                            : std::string_view());
  r.alias.assign(ctx.alias);
  r.stream = ctx.stream;
  const ir::Usage usage = ctx.usage.value_or(ir::Usage{});
  r.usage_reported = ctx.usage.has_value();
  r.input_tokens = usage.input_tokens;
  r.output_tokens = usage.output_tokens;
  r.cache_read_tokens = usage.cache_read_tokens;
  r.cache_write_tokens = usage.cache_write_tokens;
  r.reasoning_tokens = usage.reasoning_tokens;
  r.saved_input_tokens = ctx.saved_usage ? ctx.saved_usage->input_tokens : 0;
  r.saved_output_tokens = ctx.saved_usage ? ctx.saved_usage->output_tokens : 0;
  r.status = ctx.status;
  r.outcome.assign(outcome_name(ctx.outcome));
  r.error_class.assign(error_class(ctx.error));
  r.finish_reason.assign(ctx.finish_reason);
  // A cached answer names the target that produced it; billed at zero (no usage of its own).
  const Attempt* answered = ctx.last_attempt();
  r.provider.assign(answered != nullptr ? std::string_view(answered->provider)
                                        : ctx.cached_provider);
  r.model.assign(answered != nullptr ? std::string_view(answered->model) : ctx.cached_model);
  fill_timings(ctx, fill_attempts(ctx, r), r);
  fill_charge(ctx, r);
  if (ctx.guardrails.empty()) {
    r.guardrails.clear();
  } else {
    r.guardrails = guardrails_summary(ctx.guardrails);
  }
}

store::UsageRecord build_usage_record(const RequestContext& ctx, std::string_view record_id) {
  store::UsageRecord r;
  fill_usage_record(ctx, record_id, r);
  return r;
}

UsageObserver::UsageObserver(metering::UsageSink& sink, std::size_t worker)
    : sink_(sink),
      worker_(worker),
      prefix_(sink.instance_id() + "-" + std::to_string(worker) + "-") {}

void UsageObserver::on_finish(const RequestContext& ctx) {
  if (!gets_usage_record(ctx)) {
    return;
  }
  // Built into a record kept from request to request: its strings' buffers are reused, so the
  // worker allocates nothing per record in steady state.
  id_.assign(prefix_);
  char digits[24];
  const auto end = std::to_chars(digits, digits + sizeof digits, ++sequence_).ptr;
  id_.append(digits, end);
  fill_usage_record(ctx, id_, record_);
  sink_.submit(worker_, record_);
}

}  // namespace sluice::pipeline
