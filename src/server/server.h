#pragma once

#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "admin/admin_server.h"
#include "admin/cache_routes.h"
#include "admin/tenancy_routes.h"
#include "admin/usage_routes.h"
#include "cache/cache_state.h"
#include "http/otlp_exporter.h"
#include "metering/usage_sink.h"
#include "observability/access_log.h"
#include "observability/metrics.h"
#include "observability/span_buffer.h"
#include "pipeline/snapshot.h"
#include "server/worker.h"
#include "tenancy/key_directory.h"

namespace sluice::server {

// The data plane process: workers, signals, reload and drain.
//
// run() binds every worker to the configured address, prints one JSON line
// {"event":"listening","address":...,"port":...} to the access log stream (stdout by
// default) so scripts and tests can find the port, serves until SIGTERM/SIGINT, then
// drains: readiness fails, acceptors close, idle keep-alive connections close, in-flight
// requests get up to server.drain_timeout_ms to finish, the rest are cut (their upstream
// calls cancelled), the access log is flushed, and run() returns 0.
// SIGHUP re-reads the config file; a valid config with a higher `version` is published to
// every worker, anything else is logged and the running config keeps serving.
//
// With `admin:` configured, the admin listener (admin/admin_server.h) serves GET /metrics,
// GET /healthz and whatever else was added to admin_router(), on its own thread; its bound
// port is the listening line's "admin_port". It keeps answering while the workers drain and
// stops (gracefully, bounded) after them.
class Server {
 public:
  Server(std::shared_ptr<const pipeline::Snapshot> snapshot, std::string config_path);
  ~Server();
  int run();
  // Routes of the admin listener; add handlers before run() (or from any thread later).
  admin::Router& admin_router() { return admin_router_; }

 private:
  void reload();
  // The gauges read at scrape time (pools, breakers, access log, config version).
  void register_gauges();
  // The key directory's gauges (refresh state, revision, webhook events).
  void register_tenancy_gauges();
  // Binds the admin listener when configured; false (logged) when it cannot.
  bool start_admin();

  std::shared_ptr<const pipeline::Snapshot> snapshot_;
  std::string config_path_;
  SharedState shared_;
  std::unique_ptr<observability::AccessLog> access_log_;
  // `traces:` configured: spans queue here and the exporter ships them (declared in this order
  // so the exporter, which reads the buffer, goes first).
  std::unique_ptr<observability::SpanBuffer> spans_;
  std::unique_ptr<http::OtlpExporter> trace_exporter_;
  // Declared before the workers, which write to its shards, so it outlives them; the
  // callbacks go before what they read.
  std::unique_ptr<observability::MetricsRegistry> metrics_;
  pipeline::RequestMetrics request_metrics_;
  std::atomic<std::uint64_t> config_version_{0};
  std::vector<observability::CallbackHandle> metric_callbacks_;
  admin::Router admin_router_;
  std::unique_ptr<admin::UsageRoutes>
      usage_routes_;  // with `store:`; before admin_, which calls it
  std::unique_ptr<admin::TenancyRoutes> tenancy_routes_;
  std::unique_ptr<admin::CacheRoutes>
      cache_routes_;  // with `admin:`  // with `store:`, like usage_routes_
  // The serving config's key names (a store key may not take one): written by reload(), read by
  // the tenancy routes on the admin thread.
  std::mutex config_keys_mu_;
  std::set<std::string, std::less<>> config_keys_;
  std::unique_ptr<admin::AdminServer> admin_;  // null without `admin:`
  std::uint16_t admin_port_ = 0;
  // `store:` configured: the usage records' way to it (outlives the workers, which submit).
  std::unique_ptr<metering::UsageSink> usage_sink_;
  // Rate limits shared by the workers' admission (outlives them; uses the metrics registry).
  std::unique_ptr<pipeline::SharedLimits> limits_;
  std::unique_ptr<cache::CacheState> cache_;
  // The shared Redis of cache.redis / idempotency.redis (start-up settings), when configured.
  std::optional<config::StateSettings> cache_redis_settings_;
  std::unique_ptr<redis::Health> cache_redis_;
  std::optional<config::StateSettings> replay_redis_settings_;
  std::unique_ptr<redis::Health> replay_redis_;
  // Keys, key groups and budgets from the store (`tenancy:`, on with a store); outlives the
  // workers, whose requests hold its key sets.
  std::unique_ptr<tenancy::KeyDirectory> key_directory_;
  std::vector<std::unique_ptr<Worker>> workers_;
};

}  // namespace sluice::server
