#pragma once

#include <atomic>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "cache/cache_state.h"
#include "http/connection_limit.h"
#include "http/net.h"
#include "http/otlp_exporter.h"
#include "http/upstream_pool.h"
#include "metering/usage_sink.h"
#include "observability/access_log.h"
#include "observability/span_buffer.h"
#include "pipeline/access_log_observer.h"
#include "pipeline/affinity.h"
#include "pipeline/internal_call.h"
#include "pipeline/limits_admission.h"
#include "pipeline/metrics_observer.h"
#include "pipeline/pipeline.h"
#include "pipeline/snapshot.h"
#include "pipeline/trace_observer.h"
#include "pipeline/usage_observer.h"
#include "redis/answer_tier.h"
#include "redis/health.h"
#include "server/upstream_connector.h"

namespace sluice::server {

using http::Awaitable;
using http::tcp;
namespace net = http::net;

class Session;

// State shared by all workers of one server; everything here is thread-safe.
struct SharedState {
  std::atomic<std::uint32_t> connections{0};  // open client connections, all workers
  std::atomic<bool> draining{false};
  std::uint32_t workers = 1;  // actual worker count (config 0 = one per core)
  observability::AccessLog* access_log = nullptr;
  // Finished spans waiting for export and their exporter; null when `traces:` is not
  // configured. The counters (dropped, exported, failed spans) are read from here.
  observability::SpanBuffer* spans = nullptr;
  const http::OtlpExporter* trace_exporter = nullptr;
  // Prometheus metrics: each worker writes only its own shard (metrics->shard(index)).
  observability::MetricsRegistry* metrics = nullptr;
  const pipeline::RequestMetrics* request_metrics = nullptr;
  // Where usage records go (queue depth, spool size and store state are read from here); null
  // when no `store:` is configured.
  metering::UsageSink* usage_sink = nullptr;
  // Which provider stored which answer (GET /v1/responses/{id}); kept across reloads.
  pipeline::ResponseAffinity affinity;
  // The answer cache (cache/cache_state.h), its store sized by `cache.memory_bytes`.
  cache::CacheState* cache = nullptr;
  // Whether the Redis the instances share answers the cache's / Idempotency-Key's commands
  // (cache.redis, idempotency.redis); null when not configured. Settings are the start-up
  // config's.
  redis::Health* cache_redis = nullptr;
  const config::StateSettings* cache_redis_settings = nullptr;
  redis::Health* replay_redis = nullptr;
  const config::StateSettings* replay_redis_settings = nullptr;
  std::string instance_id;  // claims in the shared store name it
  // Rate limits and concurrency slots: local buckets, Redis health, compiled limits.
  pipeline::SharedLimits* limits = nullptr;
  // Keys and budgets from the store (tenancy); null without a store.
  const tenancy::KeySetHolder* store_keys = nullptr;

  // The instance-wide connection cap of a provider, shared by every worker's pool for it and
  // kept across reloads (connections of an old pool still count until they close).
  std::shared_ptr<http::ConnectionLimit> connection_limit(const std::string& provider_id,
                                                          std::uint32_t max);
  // Every provider's connection limit (metrics scrape; any thread).
  void for_each_connection_limit(
      const std::function<void(const std::string&, const http::ConnectionLimit&)>& fn);

 private:
  std::mutex limits_mu_;  // taken only when a worker builds a pool
  std::unordered_map<std::string, std::shared_ptr<http::ConnectionLimit>> limits_;
};

// One event-loop thread: its own io_context, its own SO_REUSEPORT acceptor, its own
// upstream connection pools, its own pipeline and its own copy of the config snapshot. A
// connection stays on the worker that accepted it, so nothing on the request path takes a lock.
//
// Methods marked "any thread" post to the worker's io_context; everything else must be
// called on the worker's own thread.
class Worker final : public pipeline::Host {
 public:
  Worker(std::size_t index, SharedState& shared,
         std::shared_ptr<const pipeline::Snapshot> snapshot);
  ~Worker() override;

  // Start-up, before run(): binds the listening socket (SO_REUSEPORT, so every worker can
  // bind the same port) and returns the bound port.
  std::uint16_t bind(const tcp::endpoint& endpoint);
  // Thread body: accepts and serves until drained.
  void run();

  // Any thread.
  void publish(std::shared_ptr<const pipeline::Snapshot> snapshot);
  // Any thread: stop accepting, close idle keep-alive connections, close the rest as they
  // finish their current request.
  void begin_drain();
  // Any thread: cut every remaining connection (drain deadline passed); in-flight upstream
  // calls are cancelled.
  void force_close();
  // Any thread: number of sessions still open on this worker, and of the calls it makes of
  // itself (a drain waits for both).
  std::size_t active_sessions() const {
    return active_.load(std::memory_order_acquire) + internal_calls_.in_flight();
  }

  // pipeline::Host
  std::shared_ptr<const pipeline::Snapshot> current_snapshot() const override { return snapshot_; }
  bool draining() const override { return draining_; }

  std::size_t index() const { return index_; }
  const pipeline::Snapshot& snapshot() const { return *snapshot_; }
  SharedState& shared() { return shared_; }
  net::io_context& io_context() { return ioc_; }
  const pipeline::Pipeline& pipeline() const { return pipeline_; }
  cache::SharedStore* shared_answers() { return shared_answers_.get(); }
  cache::SharedStore* shared_replays() { return shared_replays_.get(); }
  // This worker's admission by rate limits (null without SharedState::limits).
  pipeline::LimitsAdmission* limits_admission() { return limits_admission_.get(); }
  pipeline::InternalCalls& internal_calls() { return internal_calls_; }
  // This worker's share of sluice_requests_in_flight (moved by its sessions).
  observability::Series& requests_in_flight() { return *in_flight_; }
  // The pool for a network provider, created on first use and rebuilt when the provider's
  // endpoint settings change between snapshots.
  std::shared_ptr<http::UpstreamPool> pool_for(const providers::ProviderAdapter& adapter);

  // Session registry (drain needs to find idle connections).
  std::list<Session*>::iterator add_session(Session* s);
  void remove_session(std::list<Session*>::iterator it);

 private:
  Awaitable<void> accept_loop();
  Awaitable<void> timer_anchor();

  std::size_t index_;
  SharedState& shared_;
  net::io_context ioc_{1};
  tcp::acceptor acceptor_{ioc_};
  std::shared_ptr<const pipeline::Snapshot> snapshot_;
  std::unordered_map<std::string, std::shared_ptr<http::UpstreamPool>> pools_;
  std::list<Session*> sessions_;
  std::atomic<std::size_t> active_{0};
  // Embeddings of a semantic cache, background refreshes: at most this many at once.
  pipeline::InternalCalls internal_calls_{64};
  bool draining_ = false;
  WorkerConnector connector_{*this};
  WorkerSleeper sleeper_{*this};
  pipeline::AccessLogObserver access_log_observer_;
  pipeline::MetricsObserver metrics_observer_;
  observability::Series* in_flight_;
  std::unique_ptr<pipeline::UsageObserver> usage_observer_;  // null: no store, no records
  std::unique_ptr<pipeline::LimitsAdmission> limits_admission_;
  std::unique_ptr<pipeline::TraceObserver> trace_observer_;  // null: traces not configured
  // This worker's clients of the instances' shared store (null: not configured).
  std::unique_ptr<redis::AnswerTier> shared_answers_;
  std::unique_ptr<redis::AnswerTier> shared_replays_;
  std::vector<pipeline::RequestObserver*> observers_;
  pipeline::Pipeline pipeline_;
};

}  // namespace sluice::server
