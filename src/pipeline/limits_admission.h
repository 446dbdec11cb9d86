#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include <boost/asio/io_context.hpp>

#include "config/config.h"
#include "core/clock.h"
#include "limits/limit_plan.h"
#include "limits/local_limiter.h"
#include "limits/redis_limiter.h"
#include "observability/metrics.h"
#include "pipeline/observer.h"
#include "pipeline/snapshot.h"
#include "protocol/ingress.h"
#include "tenancy/key_set.h"

namespace sluice::pipeline {

// The limiter's Prometheus families.
struct LimitMetrics {
  // Registers (or finds) the families. Start-up; throws what MetricsRegistry::add throws.
  static LimitMetrics register_in(observability::MetricsRegistry& registry);

  // Counter: result (admitted, limited, failed_open, failed_closed), layer, dimension (the
  // refusing bucket's; "none" when admitted or when Redis did not answer).
  observability::FamilyId decisions;
};

// What every worker's admission shares (one per server): the local buckets (kept across
// reloads), Redis health, and the limits compiled per config version. The backend (`state:`)
// is fixed at start; a reload that changes it takes effect at the next restart (logged).
class SharedLimits {
 public:
  // `registry` null: no metrics. Registers the Redis health gauges when the backend is Redis.
  SharedLimits(const config::Config& config, observability::MetricsRegistry* registry);

  const config::StateSettings& state() const { return state_; }
  limits::LocalLimiter& local() { return local_; }
  redis::Health& health() { return health_; }
  const LimitMetrics* metrics() const { return metrics_ ? &*metrics_ : nullptr; }
  observability::MetricsRegistry* registry() const { return registry_; }
  // Unique per process start: Redis lease ids of this instance begin with it.
  const std::string& instance_id() const { return instance_id_; }

  // The limits of `snapshot`'s config version and the store keys of `keys` (null: none known
  // yet), compiled once per (version, key set revision): any thread; a mutex, taken only when a
  // worker first sees a new version or a newer key set. A key set older than the plan's keeps
  // the plan (its keys are then found by name).
  std::shared_ptr<const limits::LimitPlan> plan_for(
      const std::shared_ptr<const Snapshot>& snapshot,
      const std::shared_ptr<const tenancy::KeySet>& keys = nullptr);
  // Compiles the limits of a key set before any request holds it (the key directory's thread,
  // before it publishes the set): plan_for then finds the plan built. Building takes time in
  // the number of store keys (about 1 ms a thousand), which no request should wait for.
  void prepare(const std::shared_ptr<const tenancy::KeySet>& keys);

 private:
  // Builds plan_ for the config and key set given (mu_ held).
  void build(std::shared_ptr<const config::Config> config);

  const config::StateSettings state_;
  limits::LocalLimiter local_;
  redis::Health health_;
  observability::MetricsRegistry* registry_;
  std::optional<LimitMetrics> metrics_;
  std::string instance_id_;
  observability::CallbackHandle health_gauges_;
  std::mutex mu_;
  std::shared_ptr<const limits::LimitPlan> plan_;
  const config::Config* plan_config_ = nullptr;
  std::shared_ptr<const config::Config> plan_config_owner_;  // the snapshot's (keeps it alive)
  std::shared_ptr<const tenancy::KeySet> plan_keys_;
};

// Admission by rate limits and concurrency slots, one per worker, on that worker's thread
// (the rate_limits and provider_capacity filters call it):
//   admit          charges a request's caller-side buckets once (requests 1, tokens = the
//                  prompt's estimate plus the output it may produce; key, key group, model) and
//                  slots (group, instance); a refusal is a 429 naming the layer and dimension
//                  ("key group research: tokens per minute") with Retry-After; Redis not
//                  answering in time is the configured policy (fail open: admitted and counted;
//                  fail closed: 503)
//   admit_attempt  charges one attempt to the capacity of the provider it goes to (requests 1,
//                  the same tokens); a refusal is a retryable 429, so the plan may move on
//   on_finish      settles the tokens with the real usage (the answering provider's too;
//                  providers that failed over get theirs back) and releases the slots (the
//                  request context's ticket releases them too if a request never finishes)
// The local path completes inline: no I/O, no lock, no allocation.
class LimitsAdmission final : public RequestObserver {
 public:
  // `clock` drives the local buckets (Redis uses its own TIME; its timeout is real time).
  LimitsAdmission(SharedLimits& shared, boost::asio::io_context& ioc, std::size_t worker,
                  const Clock& clock = RealClock::instance());

  // Connects to Redis when that is the backend (returns at once).
  void start();

  boost::asio::awaitable<std::optional<Error>> admit(RequestContext& ctx, std::uint64_t tokens);
  boost::asio::awaitable<std::optional<Error>> admit_attempt(RequestContext& ctx,
                                                             std::string_view provider,
                                                             std::uint64_t tokens);
  void on_finish(const RequestContext& ctx) override;

  // The tokens a request reserves at entry: its prompt estimated from the IR (or ~4 bytes a
  // token of body), plus `output`, the most output it may produce (CallContext::output_limit).
  static std::uint64_t reserve_tokens(const protocol::IngressRequest& request,
                                      std::optional<std::uint64_t> output);

 private:
  const limits::LimitPlan& plan(const RequestContext& ctx);
  void count(std::string_view result, const limits::Bucket* bucket);
  // The 429 for a bucket's refusal (counted).
  Error refusal(const limits::Decision& decision, std::uint64_t tokens);
  // What a check's decision means for the request: admitted (the ticket now holds the limiter
  // and plan to settle with), refused, or the failure policy; counted.
  std::optional<Error> verdict(const limits::Decision& decision, std::uint64_t tokens,
                               limits::Ticket& ticket);
  // What the failure policy answers when the backend did not decide in time (counted).
  std::optional<Error> unchecked();

  SharedLimits& shared_;
  std::unique_ptr<limits::RedisLimiter> redis_;  // null: local backend
  limits::Limiter* limiter_;
  const Clock& clock_;
  observability::MetricsShard* shard_;
  const Snapshot* seen_ = nullptr;
  std::optional<std::uint64_t> seen_revision_;  // the newest key set revision asked for
  std::shared_ptr<const limits::LimitPlan> plan_;
};

}  // namespace sluice::pipeline
