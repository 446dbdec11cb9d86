#include "pipeline/limits_admission.h"

#include <charconv>
#include <random>

#include "ir/token_estimate.h"
#include "spdlog/spdlog.h"

namespace sluice::pipeline {

namespace {

using limits::Decision;

std::string random_instance_id() {
  std::random_device rd;
  const std::uint64_t value = (static_cast<std::uint64_t>(rd()) << 32) ^ rd();
  char buf[17];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, value, 16);
  return std::string(buf, end);
}

}  // namespace

LimitMetrics LimitMetrics::register_in(observability::MetricsRegistry& registry) {
  LimitMetrics m;
  observability::FamilySpec spec;
  spec.name = "sluice_limiter_decisions_total";
  spec.help =
      "Admission decisions by the rate limiter: admitted, limited (429), failed_open (Redis did "
      "not answer in time, admitted by policy), failed_closed (refused by policy)";
  spec.type = observability::MetricType::kCounter;
  spec.labels = {"result", "layer", "dimension"};
  m.decisions = registry.add(std::move(spec));
  return m;
}

SharedLimits::SharedLimits(const config::Config& config, observability::MetricsRegistry* registry)
    : state_(config.state),
      health_("limits", state_.redis_host + ":" + std::to_string(state_.redis_port),
              state_.on_error == config::StateSettings::OnError::kFailOpen
                  ? "admitting requests without limits (fail_open)"
                  : "refusing requests (fail_closed)"),
      registry_(registry),
      instance_id_(random_instance_id()) {
  if (registry_ == nullptr) {
    return;
  }
  metrics_ = LimitMetrics::register_in(*registry_);
  if (state_.backend == config::StateSettings::Backend::kRedis) {
    health_gauges_ = registry_->observe(
        observability::MetricType::kGauge, "sluice_limiter_redis_up",
        "1 while the limiter's Redis answers within its timeout, 0 while the failure policy "
        "applies",
        {}, [this](observability::SampleSink& sink) { sink.sample({}, health_.up() ? 1.0 : 0.0); });
  }
}

std::shared_ptr<const limits::LimitPlan> SharedLimits::plan_for(
    const std::shared_ptr<const Snapshot>& snapshot,
    const std::shared_ptr<const tenancy::KeySet>& keys) {
  std::lock_guard lock(mu_);
  const bool new_config = plan_config_ != &snapshot->config();
  const bool newer_keys = keys != nullptr && keys != plan_keys_ &&
                          (plan_keys_ == nullptr || keys->revision() > plan_keys_->revision());
  if (!new_config && !newer_keys) {
    return plan_;
  }
  if (new_config) {
    const config::StateSettings& s = snapshot->config().state;
    if (s.backend != state_.backend || s.redis_url != state_.redis_url) {
      spdlog::warn(
          "limits: the state backend changed in config version {}; it takes effect at "
          "the next restart",
          snapshot->version());
    }
  }
  if (newer_keys) {
    plan_keys_ = keys;
  }
  // The plan keeps the snapshot (and so its config and keys) and the key set alive.
  build(std::shared_ptr<const config::Config>(snapshot, &snapshot->config()));
  return plan_;
}

void SharedLimits::prepare(const std::shared_ptr<const tenancy::KeySet>& keys) {
  std::lock_guard lock(mu_);
  if (keys == nullptr || (plan_keys_ != nullptr && keys->revision() <= plan_keys_->revision())) {
    return;
  }
  plan_keys_ = keys;
  if (plan_config_owner_ != nullptr) {
    build(plan_config_owner_);
  }  // else the first plan_for builds with these keys
}

void SharedLimits::build(std::shared_ptr<const config::Config> config) {
  std::vector<limits::ExtraKey> extra;
  if (plan_keys_ != nullptr) {
    extra.reserve(plan_keys_->size());
    for (const tenancy::StoreKey& k : plan_keys_->keys()) {
      extra.push_back({&k.key, &k.key_quota, &k.group_quota});
    }
  }
  plan_config_ = config.get();
  plan_config_owner_ = config;
  plan_ = std::make_shared<const limits::LimitPlan>(std::move(config), local_, extra, plan_keys_);
}

LimitsAdmission::LimitsAdmission(SharedLimits& shared, boost::asio::io_context& ioc,
                                 std::size_t worker, const Clock& clock)
    : shared_(shared),
      limiter_(&shared.local()),
      clock_(clock),
      shard_(shared.registry() != nullptr && shared.metrics() != nullptr
                 ? &shared.registry()->shard(worker)
                 : nullptr) {
  if (shared.state().backend == config::StateSettings::Backend::kRedis) {
    redis_ = std::make_unique<limits::RedisLimiter>(
        ioc, shared.state(), shared.local(), shared.health(),
        shared.instance_id() + ":" + std::to_string(worker) + ":");
    limiter_ = redis_.get();
  }
}

void LimitsAdmission::start() {
  if (redis_) {
    redis_->start();
  }
}

std::uint64_t LimitsAdmission::reserve_tokens(const protocol::IngressRequest& request,
                                              std::optional<std::uint64_t> output) {
  const std::uint64_t prompt =
      request.ir ? ir::estimate_input_tokens(*request.ir) : request.body.size() / 4 + 1;
  // An absurd limit in a request must not reserve more than any bucket could ever hold.
  return prompt + std::min<std::uint64_t>(output.value_or(0), 10'000'000);
}

const limits::LimitPlan& LimitsAdmission::plan(const RequestContext& ctx) {
  // Config keys need only the config's version; a store key needs the plan of its key set
  // (or a newer one).
  const bool newer_keys =
      ctx.key_set != nullptr && (!seen_revision_ || ctx.key_set->revision() > *seen_revision_);
  if (seen_ != ctx.snapshot.get() || newer_keys) {
    plan_ = shared_.plan_for(ctx.snapshot, ctx.key_set);
    seen_ = ctx.snapshot.get();
    if (newer_keys) {
      seen_revision_ = ctx.key_set->revision();
    }
  }
  return *plan_;
}

void LimitsAdmission::count(std::string_view result, const limits::Bucket* bucket) {
  if (shard_ == nullptr) {
    return;
  }
  shard_
      ->at(shared_.metrics()->decisions,
           {result, bucket != nullptr ? limits::label(bucket->layer) : "none",
            bucket != nullptr ? limits::label(bucket->dimension) : "none"})
      .add(1);
}

Error LimitsAdmission::refusal(const Decision& d, std::uint64_t tokens) {
  const limits::Bucket& b = *d.limited;
  count("limited", &b);
  std::string message = "rate limit exceeded: " + std::string(limits::to_string(b.layer));
  if (!b.name.empty()) {
    message += " " + b.name;
  }
  message += ": " + std::string(limits::to_string(b.dimension)) + " (limit " +
             std::to_string(b.limit) + ")";
  if (d.never) {
    message += "; this request alone needs " + std::to_string(tokens) +
               " tokens (prompt estimate plus max output), more than the limit allows";
  }
  const auto seconds =
      static_cast<std::uint32_t>(std::max<std::int64_t>(1, (d.retry_after.count() + 999) / 1000));
  return Error(ErrorKind::kRateLimited, std::move(message))
      .with_code(b.dimension == limits::Dimension::kTokens     ? "tokens_limit_exceeded"
                 : b.dimension == limits::Dimension::kRequests ? "requests_limit_exceeded"
                                                               : "concurrency_limit_exceeded")
      .with_retry_after(seconds);
}

std::optional<Error> LimitsAdmission::verdict(const Decision& d, std::uint64_t tokens,
                                              limits::Ticket& ticket) {
  switch (d.status) {
    case Decision::Status::kOk:
      ticket.limiter = limiter_;
      ticket.plan = plan_;
      count("admitted", nullptr);
      return std::nullopt;
    case Decision::Status::kError:
      return unchecked();
    case Decision::Status::kOverLimit:
      break;
  }
  return refusal(d, tokens);
}

std::optional<Error> LimitsAdmission::unchecked() {
  if (shared_.state().on_error == config::StateSettings::OnError::kFailOpen) {
    count("failed_open", nullptr);
    return std::nullopt;
  }
  count("failed_closed", nullptr);
  return Error(ErrorKind::kUnavailable, "rate limits cannot be checked right now; retry shortly")
      .with_code("limits_unavailable")
      .with_retry_after(1);
}

boost::asio::awaitable<std::optional<Error>> LimitsAdmission::admit(RequestContext& ctx,
                                                                    std::uint64_t tokens) {
  const limits::LimitPlan& p = plan(ctx);
  if (p.empty()) {
    co_return std::nullopt;
  }
  // The provider layer is charged per attempt (admit_attempt), for the provider it goes to.
  const limits::Charges charges = p.charges(ctx.key, ctx.alias, "", tokens);
  if (charges.empty()) {
    co_return std::nullopt;
  }
  limits::Ticket& ticket = ctx.limits;
  const Decision d = co_await limiter_->check(
      charges, clock_.now(), std::chrono::steady_clock::now() + shared_.state().timeout,
      ticket.lease);
  ticket.requests = d.requests;
  ticket.tokens = d.tokens;
  if (d.status == Decision::Status::kOk) {
    ticket.reserved = tokens;
  }
  co_return verdict(d, tokens, ticket);
}

boost::asio::awaitable<std::optional<Error>> LimitsAdmission::admit_attempt(
    RequestContext& ctx, std::string_view provider, std::uint64_t tokens) {
  const limits::LimitPlan& p = plan(ctx);
  const limits::Charges charges = p.provider_charges(provider, tokens);
  limits::Ticket& ticket = ctx.limits;
  if (charges.empty() || ticket.providers.size() == ticket.providers.capacity()) {
    co_return std::nullopt;  // no capacity limit (or an attempt beyond what a ticket tracks)
  }
  limits::Lease none;  // provider layers have no slots
  const Decision d = co_await limiter_->check(
      charges, clock_.now(), std::chrono::steady_clock::now() + shared_.state().timeout, none);
  if (d.status == Decision::Status::kOk) {
    ticket.providers.push_back({provider, tokens, ctx.attempts.size()});
  }
  co_return verdict(d, tokens, ticket);
}

void LimitsAdmission::on_finish(const RequestContext& ctx) {
  limits::Ticket& ticket = ctx.limits;
  if (ticket.limiter == nullptr) {
    return;
  }
  // Settle the tokens taken with what the call used: the real usage when the upstream
  // reported it; nothing when no upstream answered (rejected, failed before any output, a
  // cached answer); otherwise (a stream cut without usage) the reservation stands.
  std::optional<std::int64_t> used;
  if (ctx.usage) {
    used = static_cast<std::int64_t>(ctx.usage->input_tokens + ctx.usage->output_tokens);
  } else if (ctx.outcome == Outcome::kNone || ctx.outcome == Outcome::kUpstreamError ||
             ctx.outcome == Outcome::kCacheHit || ctx.outcome == Outcome::kCoalesced ||
             ctx.outcome == Outcome::kReplayed) {
    used = 0;
  }
  const auto now = clock_.now();
  if (used && ticket.plan != nullptr && ticket.reserved != 0) {
    const std::int64_t delta = *used - static_cast<std::int64_t>(ticket.reserved);
    if (delta != 0) {
      ticket.limiter->correct(ticket.plan->token_charges(ctx.key, ctx.alias, "", delta), now);
    }
  }
  // Each provider charged: the last attempt's answered (its usage settles it); the attempts
  // before it failed over and produced nothing.
  for (const limits::Ticket::ProviderCharge& c : ticket.providers) {
    if (ticket.plan == nullptr) {
      break;
    }
    const bool answered = c.attempt + 1 == ctx.attempts.size();
    const std::int64_t reserved = static_cast<std::int64_t>(c.reserved);
    const std::int64_t delta = answered ? (used ? *used - reserved : 0) : -reserved;
    if (delta != 0) {
      ticket.limiter->correct(ticket.plan->token_charges(nullptr, "", c.provider, delta), now);
    }
  }
  ticket.providers.clear();
  ticket.release();
  ticket.limiter = nullptr;
  ticket.plan.reset();
}

}  // namespace sluice::pipeline
