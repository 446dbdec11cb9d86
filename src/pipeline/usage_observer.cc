#include "pipeline/usage_observer.h"

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
  }
  in.operation = ctx.ingress != nullptr ? protocol::to_string(ctx.ingress->operation()) : "";
  in.usage_reported = ctx.usage.has_value();
  in.usage = ctx.usage.value_or(ir::Usage{});
  in.entered_at_ms = unix_ms(ctx.wall_started);
  return in;
}

store::UsageRecord build_usage_record(const RequestContext& ctx, std::string record_id) {
  store::UsageRecord r;
  r.record_id = std::move(record_id);
  r.request_id = ctx.request_id;
  r.started_at_ms = unix_ms(ctx.wall_started);
  r.ended_at_ms = unix_ms(ctx.wall_ended);
  if (ctx.key != nullptr) {
    r.key_name = ctx.key->name;
    r.key_group = ctx.key->group;
  }
  r.feature = ctx.feature;
  if (ctx.ingress != nullptr) {
    r.ingress = std::string(ctx.ingress->protocol());
    r.operation = std::string(protocol::to_string(ctx.ingress->operation()));
  }
  r.alias = std::string(ctx.alias);
  r.stream = ctx.stream;
  if (ctx.usage) {
    r.usage_reported = true;
    r.input_tokens = ctx.usage->input_tokens;
    r.output_tokens = ctx.usage->output_tokens;
    r.cache_read_tokens = ctx.usage->cache_read_tokens;
    r.cache_write_tokens = ctx.usage->cache_write_tokens;
    r.reasoning_tokens = ctx.usage->reasoning_tokens;
  }
  r.status = ctx.status;
  r.outcome = std::string(outcome_name(ctx.outcome));
  r.error_class = error_class(ctx.error);
  r.finish_reason = ctx.finish_reason;

  std::int64_t upstream_us = 0;
  std::int64_t backoff_us = 0;
  std::int64_t acquire_us = 0;
  r.attempts.reserve(ctx.attempts.size());
  for (const Attempt& a : ctx.attempts) {
    store::AttemptRecord& out = r.attempts.emplace_back();
    out.provider = std::string(a.provider);
    out.model = std::string(a.model);
    out.path = std::string(a.path);
    out.status = a.status;
    out.error_class = error_class(a.error);
    out.acquire_us = a.acquire.count();
    out.first_byte_us = a.first_byte.count();
    out.duration_us = a.duration.count();
    out.backoff_ms = a.backoff.count();
    out.reused_connection = a.reused_connection;
    upstream_us += std::max<std::int64_t>(0, a.duration.count());
    acquire_us += std::max<std::int64_t>(0, a.acquire.count());
    backoff_us += duration_cast<microseconds>(a.backoff).count();
  }
  if (const Attempt* last = ctx.last_attempt()) {
    r.provider = std::string(last->provider);
    r.model = std::string(last->model);
    r.upstream_ttfb_us = last->first_byte.count();
  }

  const std::int64_t total = duration_cast<microseconds>(ctx.ended - ctx.started).count();
  r.total_us = total;
  r.overhead_us = std::max<std::int64_t>(0, total - upstream_us - backoff_us);
  r.queue_us = backoff_us + acquire_us;
  r.ttft_us = ctx.stream && ctx.first_token.count() >= 0 ? ctx.first_token.count() : -1;
  std::int64_t generation_us = -1;
  if (r.ttft_us >= 0) {
    generation_us = total - r.ttft_us;
  } else if (const Attempt* last = ctx.last_attempt()) {
    generation_us = last->duration.count();
  }
  if (ctx.usage && ctx.usage->output_tokens > 0 && generation_us > 0) {
    r.output_tokens_per_s_milli = static_cast<std::int64_t>(
        ctx.usage->output_tokens * 1'000'000'000ULL / static_cast<std::uint64_t>(generation_us));
  }

  if (ctx.charge) {
    r.priced = ctx.charge->priced;
    r.price_version = ctx.charge->price_version;
    r.currency = ctx.charge->currency;
    r.cost_micros = ctx.charge->micros;
    r.cost_items = ctx.charge->items_json;
  }
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
  sink_.submit(worker_, build_usage_record(ctx, prefix_ + std::to_string(++sequence_)));
}

}  // namespace sluice::pipeline
