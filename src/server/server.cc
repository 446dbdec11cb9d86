#include "server/server.h"

#include <csignal>
#include <set>
#include <thread>

#include <boost/asio/signal_set.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

#include "core/version.h"
#include "http/json_post.h"
#include "observability/trace_context.h"
#include "providers/registry.h"
#include "spdlog/spdlog.h"
#include "store/store.h"

namespace sluice::server {
namespace net = http::net;
using Clock = std::chrono::steady_clock;

namespace {

// host:port of a Redis, for log lines (never the URL: it may hold a password).
std::string redis_where(const config::StateSettings& s) {
  return s.redis_host + ":" + std::to_string(s.redis_port);
}

// The usage sink for the configured store, started; null (and said so) without a store. The
// store is opened on the sink's writer thread, so a store that is down at start delays nothing:
// records spool until it answers.
std::unique_ptr<metering::UsageSink> make_usage_sink(const config::Config& cfg,
                                                     std::uint32_t workers) {
  if (cfg.store.kind == config::StoreSettings::Kind::kNone) {
    // One argument: spdlog prints it as it is, no format string (so no brace escaping).
    spdlog::info(
        "no store configured: usage records are not persisted (set store: { sqlite: "
        "./sluice.db } to keep them)");
    return nullptr;
  }
  metering::UsageSinkOptions options;
  options.workers = workers;
  options.queue_capacity = cfg.metering.queue_capacity;
  options.batch_size = cfg.metering.batch_size;
  options.flush_interval = cfg.metering.flush_interval;
  options.spool_path = cfg.metering.spool;
  if (options.spool_path.empty()) {
    options.spool_path = cfg.store.kind == config::StoreSettings::Kind::kSqlite
                             ? cfg.store.sqlite_path + ".spool"
                             : std::string("sluice-usage.spool");
  }
  auto sink = std::make_unique<metering::UsageSink>(
      options, [settings = cfg.store] { return store::open_store(settings); });
  sink->start();
  spdlog::info("usage records go to the {} store (spool {})",
               cfg.store.kind == config::StoreSettings::Kind::kSqlite ? "sqlite" : "postgres",
               options.spool_path);
  return sink;
}

// The key directory for the configured store, started; null when tenancy is off. Its store is
// opened (and migrated) on its own thread, so a store that is down at start delays nothing.
std::unique_ptr<tenancy::KeyDirectory> make_key_directory(const config::Config& cfg,
                                                          pipeline::SharedLimits& limits) {
  if (!cfg.tenancy.enabled) {
    return nullptr;
  }
  tenancy::KeyDirectoryOptions options;
  options.settings = cfg.tenancy;
  options.open_store = [settings = cfg.store]() -> Result<std::unique_ptr<store::Store>> {
    auto opened = store::open_store(settings);
    if (!opened) {
      return std::move(opened).error();
    }
    if (auto migrated = (*opened)->migrate(); !migrated) {
      return std::move(migrated).error();
    }
    return std::move(*opened);
  };
  options.post = http::post_json;
  options.instance = limits.instance_id();
  options.config_keys = cfg.keys;
  // Each key set's rate limits are compiled on the directory's thread, not by a request.
  options.before_publish = [&limits](const std::shared_ptr<const tenancy::KeySet>& set) {
    limits.prepare(set);
  };
  auto directory = std::make_unique<tenancy::KeyDirectory>(std::move(options));
  directory->start();
  spdlog::info("keys and budgets from the store: refreshed every {} ms{}",
               cfg.tenancy.refresh.count(),
               cfg.tenancy.webhook_url.empty() ? "" : "; budget events go to the webhook");
  return directory;
}

std::set<std::string, std::less<>> key_names(const config::Config& cfg) {
  std::set<std::string, std::less<>> names;
  for (const config::Key& k : cfg.keys) {
    names.insert(k.name);
  }
  return names;
}

// Whether a reload leaves what the usage sink was started with unchanged.
bool same_sink_settings(const config::Config& a, const config::Config& b) {
  return a.store.kind == b.store.kind && a.store.sqlite_path == b.store.sqlite_path &&
         a.store.postgres_url == b.store.postgres_url && a.metering.spool == b.metering.spool &&
         a.metering.queue_capacity == b.metering.queue_capacity &&
         a.metering.batch_size == b.metering.batch_size &&
         a.metering.flush_interval == b.metering.flush_interval;
}

}  // namespace

Server::Server(std::shared_ptr<const pipeline::Snapshot> snapshot, std::string config_path)
    : snapshot_(std::move(snapshot)), config_path_(std::move(config_path)) {}

Server::~Server() = default;

void Server::reload() {
  auto loaded = providers::load_config_file(config_path_);
  if (!loaded) {
    spdlog::error("config reload rejected, still serving version {}: {}", snapshot_->version(),
                  loaded.error().message());
    return;
  }
  if ((*loaded)->version <= snapshot_->version()) {
    spdlog::warn("config reload ignored: version {} is not newer than the running version {}",
                 (*loaded)->version, snapshot_->version());
    return;
  }
  // Target health (breakers, retry budgets, latency) carries over to the new version.
  auto snap = pipeline::Snapshot::build(*loaded, snapshot_->health());
  if (!snap) {
    spdlog::error("config reload rejected, still serving version {}: {}", snapshot_->version(),
                  snap.error().message());
    return;
  }
  // A config key may not take a store key's name (tenancy/name_collision.h).
  if (auto admitted =
          key_directory_ ? key_directory_->admit_config_keys((*loaded)->keys) : Result<void>();
      !admitted) {
    spdlog::error("config reload rejected, still serving version {}: {}", snapshot_->version(),
                  admitted.error().message());
    return;
  }
  if (!same_sink_settings(snapshot_->config(), (*snap)->config())) {
    spdlog::warn(
        "config version {}: store and usage sink settings take effect at the next start "
        "(prices and max_feature_length apply now)",
        (*snap)->version());
  }
  snapshot_ = *snap;
  if (cache_) {
    cache_->answers.set_capacity(snapshot_->config().cache.memory_bytes);
    cache_->replays.set_capacity(snapshot_->config().idempotency.memory_bytes);
    cache_->semantic.set_capacity(snapshot_->config().cache.semantic_memory_bytes);
  }
  {
    std::lock_guard lock(config_keys_mu_);
    config_keys_ = key_names(snapshot_->config());
  }
  config_version_.store(snapshot_->version(), std::memory_order_relaxed);
  if (admin_) {
    admin_->update(snapshot_->config().admin);
  }
  for (auto& w : workers_) {
    w->publish(snapshot_);
  }
  spdlog::info("config version {} is now serving", snapshot_->version());
}

int Server::run() {
  // Signal handling is in place before anything announces the server (the listening line)
  // or starts threads, so a SIGTERM/SIGHUP can never hit the default action.
  net::io_context main_ioc{1};
  net::signal_set signals(main_ioc, SIGTERM, SIGINT, SIGHUP);
  // Only this thread takes the signals: the threads started below inherit a mask that
  // blocks them, so none can receive one after `signals` is gone and the default action
  // (termination) is back.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  const config::Config& cfg = snapshot_->config();
  std::uint32_t n = cfg.server.workers;
  if (n == 0) {
    n = std::max(1u, std::thread::hardware_concurrency());
  }
  shared_.workers = n;
  access_log_ = std::make_unique<observability::AccessLog>(
      cfg.access_log.enabled ? cfg.access_log.path : std::string("/dev/null"), n);
  shared_.access_log = access_log_.get();
  if (cfg.traces.enabled) {
    // Trace settings are read at start: a reload changes the sample ratio (read per request)
    // but not the collector, queue or batching.
    spans_ = std::make_unique<observability::SpanBuffer>(n, cfg.traces.queue_capacity);
    trace_exporter_ = std::make_unique<http::OtlpExporter>(
        cfg.traces, *spans_, observability::to_hex(observability::new_trace_id()));
    shared_.spans = spans_.get();
    shared_.trace_exporter = trace_exporter_.get();
  }
  usage_sink_ = make_usage_sink(cfg, n);
  shared_.usage_sink = usage_sink_.get();
  metrics_ = std::make_unique<observability::MetricsRegistry>(n);
  request_metrics_ = pipeline::RequestMetrics::register_in(*metrics_);
  shared_.metrics = metrics_.get();
  shared_.request_metrics = &request_metrics_;
  config_version_.store(cfg.version, std::memory_order_relaxed);
  // Always there (16 empty shards cost nothing), so a reload may turn a route's cache on.
  cache_ = std::make_unique<cache::CacheState>(cfg.cache.memory_bytes, cfg.idempotency.memory_bytes,
                                               cfg.cache.semantic_memory_bytes);
  shared_.cache = cache_.get();
  register_gauges();
  limits_ = std::make_unique<pipeline::SharedLimits>(cfg, metrics_.get());
  shared_.limits = limits_.get();
  shared_.instance_id = limits_->instance_id();
  if (cfg.cache.redis) {
    cache_redis_settings_ = *cfg.cache.redis;
    cache_redis_ = std::make_unique<redis::Health>(
        "cache", redis_where(*cfg.cache.redis), "answers come from this instance and the origin");
    shared_.cache_redis = cache_redis_.get();
    shared_.cache_redis_settings = &*cache_redis_settings_;
  }
  if (cfg.idempotency.redis) {
    replay_redis_settings_ = *cfg.idempotency.redis;
    replay_redis_ =
        std::make_unique<redis::Health>("idempotency", redis_where(*cfg.idempotency.redis),
                                        "each instance keeps its own Idempotency-Keys");
    shared_.replay_redis = replay_redis_.get();
    shared_.replay_redis_settings = &*replay_redis_settings_;
  }
  key_directory_ = make_key_directory(cfg, *limits_);
  if (key_directory_) {
    shared_.store_keys = &key_directory_->keys();
    register_tenancy_gauges();
  }

  boost::system::error_code ec;
  auto address = net::ip::make_address(cfg.listen.host, ec);
  if (ec) {
    spdlog::error("listen address {} is not an IP address", cfg.listen.host);
    return 1;
  }
  std::uint16_t port = cfg.listen.port;
  try {
    for (std::uint32_t i = 0; i < n; ++i) {
      workers_.push_back(std::make_unique<Worker>(i, shared_, snapshot_));
      // With port 0 the first worker picks a free port and the others join it.
      port = workers_.back()->bind(http::tcp::endpoint(address, port));
    }
  } catch (const std::exception& e) {
    spdlog::error("cannot listen on {}:{}: {}", cfg.listen.host, cfg.listen.port, e.what());
    return 1;
  }
  if (!start_admin()) {
    return 1;
  }
  for (const std::string& note : cfg.notes) {
    spdlog::info("config: {}", note);
  }
  // The listening line goes to stdout even when the access log goes elsewhere.
  boost::json::object listening{{"event", "listening"},
                                {"address", cfg.listen.host},
                                {"port", port},
                                {"workers", n},
                                {"config_version", cfg.version}};
  if (admin_) {
    listening["admin_port"] = admin_port_;
  }
  std::string line = boost::json::serialize(listening);
  std::fwrite(line.data(), 1, line.size(), stdout);
  std::fputc('\n', stdout);
  std::fflush(stdout);

  std::vector<std::thread> threads;
  for (auto& w : workers_) {
    threads.emplace_back([&w] { w->run(); });
  }

  if (admin_) {
    admin_->start();
  }
  net::steady_timer drain_deadline(main_ioc);
  net::steady_timer poll(main_ioc);
  bool draining = false;

  std::function<void()> wait_for_workers = [&] {
    std::size_t active = 0;
    for (auto& w : workers_) {
      active += w->active_sessions();
    }
    if (active == 0) {
      main_ioc.stop();  // drained: the pending signal wait must not keep us alive
      return;
    }
    poll.expires_after(std::chrono::milliseconds(10));
    poll.async_wait([&](boost::system::error_code e) {
      if (!e) {
        wait_for_workers();
      }
    });
  };

  std::function<void()> on_signal = [&] {
    signals.async_wait([&](boost::system::error_code e, int signo) {
      if (e) {
        return;
      }
      if (signo == SIGHUP) {
        reload();
        on_signal();
        return;
      }
      if (draining) {
        on_signal();
        return;
      }
      draining = true;
      shared_.draining = true;
      spdlog::info("signal {}: draining (up to {} ms)", signo,
                   snapshot_->config().server.drain_timeout.count());
      for (auto& w : workers_) {
        w->begin_drain();
      }
      drain_deadline.expires_after(snapshot_->config().server.drain_timeout);
      drain_deadline.async_wait([&](boost::system::error_code te) {
        if (!te) {
          spdlog::warn("drain deadline passed; closing remaining connections");
          for (auto& w : workers_) {
            w->force_close();
          }
          // Cut connections unwind within milliseconds; never hang on one that does not.
          drain_deadline.expires_after(std::chrono::seconds(5));
          drain_deadline.async_wait([&](boost::system::error_code he) {
            if (!he) {
              spdlog::error("connections still open 5 s after the drain deadline; exiting");
              main_ioc.stop();
            }
          });
        }
      });
      wait_for_workers();
      on_signal();
    });
  };
  on_signal();
  pthread_sigmask(SIG_UNBLOCK, &stop_signals, nullptr);
  main_ioc.run();

  for (auto& w : workers_) {
    w->io_context().stop();
  }
  for (auto& t : threads) {
    t.join();
  }
  workers_.clear();
  if (key_directory_) {
    key_directory_->stop();  // queued budget events get their one try
  }
  if (usage_sink_) {
    // Every record queued goes to the store, or to the spool once the store is down or the
    // deadline passes: nothing acknowledged is lost, nothing waits beyond the deadline.
    usage_sink_->stop(cfg.server.drain_timeout);
  }
  // Once `signals` is destroyed the default actions return; a supervisor repeating its
  // SIGTERM while we flush and exit must not turn a clean drain into a kill.
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  if (admin_) {
    admin_->stop();  // after the workers: scrapes still answered while they drain
  }
  access_log_->flush();
  if (trace_exporter_) {
    trace_exporter_->shutdown();  // the last requests' spans, bounded by export_timeout
  }
  spdlog::info("drained; exiting");
  return 0;
}

void Server::register_gauges() {
  using observability::MetricType;
  using observability::SampleSink;
  auto& m = *metrics_;
  auto add = [this](observability::CallbackHandle h) { metric_callbacks_.push_back(std::move(h)); };
  add(m.observe(MetricType::kGauge, "sluice_build_info", "Always 1; the version as a label.",
                {"version"}, [](SampleSink& s) { s.sample({kVersion}, 1); }));
  add(m.observe(MetricType::kGauge, "sluice_config_version", "The config version serving.", {},
                [this](SampleSink& s) {
                  s.sample({},
                           static_cast<double>(config_version_.load(std::memory_order_relaxed)));
                }));
  add(m.observe(MetricType::kGauge, "sluice_client_connections", "Open client connections.", {},
                [this](SampleSink& s) {
                  s.sample({}, shared_.connections.load(std::memory_order_relaxed));
                }));
  add(m.observe(MetricType::kCounter, "sluice_access_log_dropped_total",
                "Access-log lines dropped because a worker's log queue was full.", {},
                [log = access_log_.get()](SampleSink& s) {
                  s.sample({}, static_cast<double>(log->dropped()));
                }));
  add(m.observe(MetricType::kGauge, "sluice_cache_entries",
                "Answers in the in-process cache, and the bytes they hold against its bound.",
                {"measure"}, [this](SampleSink& s) {
                  const cache::MemoryStore::Stats stats = cache_->answers.stats();
                  s.sample({"entries"}, static_cast<double>(stats.entries));
                  s.sample({"bytes"}, static_cast<double>(stats.bytes));
                  s.sample({"capacity_bytes"}, static_cast<double>(stats.capacity));
                  s.sample({"shared_calls_in_flight"},
                           static_cast<double>(cache_->flights.in_air()));
                }));
  add(m.observe(MetricType::kGauge, "sluice_cache_backend_up",
                "Whether the Redis the instances share answers (1) or not (0): answers cache.redis "
                "and idempotency.redis, when configured.",
                {"store"}, [this](SampleSink& s) {
                  if (shared_.cache_redis != nullptr) {
                    s.sample({"answers"}, shared_.cache_redis->up() ? 1 : 0);
                  }
                  if (shared_.replay_redis != nullptr) {
                    s.sample({"idempotency"}, shared_.replay_redis->up() ? 1 : 0);
                  }
                }));
  add(m.observe(MetricType::kCounter, "sluice_cache_backend_errors_total",
                "Commands to the shared Redis that got no answer in time (down, slow, refused, "
                "too many waiting): each is a miss, served by the origin.",
                {"store"}, [this](SampleSink& s) {
                  if (shared_.cache_redis != nullptr) {
                    s.sample({"answers"}, static_cast<double>(shared_.cache_redis->errors()));
                  }
                  if (shared_.replay_redis != nullptr) {
                    s.sample({"idempotency"}, static_cast<double>(shared_.replay_redis->errors()));
                  }
                }));
  add(m.observe(MetricType::kCounter, "sluice_cache_evictions_total",
                "Cached answers dropped: for space (evicted, the least valuable first) or past "
                "their time (expired).",
                {"reason"}, [this](SampleSink& s) {
                  const cache::MemoryStore::Stats stats = cache_->answers.stats();
                  s.sample({"evicted"}, static_cast<double>(stats.evictions));
                  s.sample({"expired"}, static_cast<double>(stats.expirations));
                }));
  add(m.observe(MetricType::kGauge, "sluice_upstream_connections",
                "Upstream connections per provider, all workers: in_use or idle in the pools.",
                {"provider", "state"}, [this](SampleSink& s) {
                  shared_.for_each_connection_limit(
                      [&s](const std::string& provider, const http::ConnectionLimit& limit) {
                        const std::uint32_t open = limit.open();
                        const std::uint32_t idle = std::min(limit.idle(), open);
                        s.sample({provider, "in_use"}, open - idle);
                        s.sample({provider, "idle"}, idle);
                      });
                }));
  add(m.observe(MetricType::kGauge, "sluice_upstream_connections_max",
                "The instance-wide connection cap per provider (pool.max_connections).",
                {"provider"}, [this](SampleSink& s) {
                  shared_.for_each_connection_limit(
                      [&s](const std::string& provider, const http::ConnectionLimit& limit) {
                        s.sample({provider}, limit.max());
                      });
                }));
  // Target health is kept across reloads (the same registry), so the one read here stays
  // current.
  std::shared_ptr<routing::HealthRegistry> health = snapshot_->health();
  add(m.observe(MetricType::kGauge, "sluice_breaker_state",
                "Circuit breaker per target: 0 closed, 1 open, 2 half-open.", {"provider", "model"},
                [health](SampleSink& s) {
                  health->for_each([&s](const routing::TargetHealth& h) {
                    s.sample({h.provider, h.model}, static_cast<double>(h.breaker.state()));
                  });
                }));
  add(m.observe(MetricType::kCounter, "sluice_breaker_opened_total",
                "Times a target's breaker opened.", {"provider", "model"}, [health](SampleSink& s) {
                  health->for_each([&s](const routing::TargetHealth& h) {
                    s.sample({h.provider, h.model}, static_cast<double>(h.breaker.opened_count()));
                  });
                }));
  add(m.observe(MetricType::kGauge, "sluice_upstream_in_flight",
                "Upstream attempts in progress per target.", {"provider", "model"},
                [health](SampleSink& s) {
                  health->for_each([&s](const routing::TargetHealth& h) {
                    s.sample({h.provider, h.model}, h.in_flight.load(std::memory_order_relaxed));
                  });
                }));
  if (const metering::UsageSink* sink = usage_sink_.get()) {
    add(m.observe(
        MetricType::kGauge, "sluice_usage_queue_depth",
        "Usage records waiting for the store writer, all workers.", {},
        [sink](SampleSink& s) { s.sample({}, static_cast<double>(sink->queue_depth())); }));
    add(m.observe(
        MetricType::kGauge, "sluice_usage_spool_bytes",
        "Bytes in the local spool (records kept while the store is down or slow).", {},
        [sink](SampleSink& s) { s.sample({}, static_cast<double>(sink->spool_bytes())); }));
    add(m.observe(
        MetricType::kGauge, "sluice_usage_spool_records",
        "Records in the local spool, waiting to be replayed into the store.", {},
        [sink](SampleSink& s) { s.sample({}, static_cast<double>(sink->spool_records())); }));
    struct SinkCounter {
      const char* name;
      const char* help;
      std::uint64_t (metering::UsageSink::*value)() const;
    };
    for (const SinkCounter& c : {
             SinkCounter{"sluice_usage_records_written_total",
                         "Usage records written to the store.", &metering::UsageSink::written},
             SinkCounter{"sluice_usage_records_spooled_total",
                         "Usage records written to the spool instead of the store.",
                         &metering::UsageSink::spooled},
             SinkCounter{"sluice_usage_records_deferred_total",
                         "Of the spooled records: those spooled with the store up because it was "
                         "slower than the traffic (replayed as it catches up).",
                         &metering::UsageSink::deferred},
             SinkCounter{"sluice_usage_records_rejected_total",
                         "Usage records the store refused for what they hold (an out-of-range "
                         "number), kept in the spool's .rejected file instead.",
                         &metering::UsageSink::rejected},
             SinkCounter{"sluice_usage_records_dropped_total",
                         "Usage records lost: a worker's queue was full, or neither store nor "
                         "spool took them (should stay 0).",
                         &metering::UsageSink::dropped},
         }) {
      add(m.observe(MetricType::kCounter, c.name, c.help, {},
                    [sink, value = c.value](SampleSink& s) {
                      s.sample({}, static_cast<double>((sink->*value)()));
                    }));
    }
    add(m.observe(MetricType::kGauge, "sluice_usage_store_up",
                  "1 while the last write to the store succeeded, 0 while records go to the "
                  "spool (absent until the first write).",
                  {}, [sink](SampleSink& s) {
                    switch (sink->store_state()) {
                      case metering::UsageSink::StoreState::kUp:
                        s.sample({}, 1);
                        break;
                      case metering::UsageSink::StoreState::kDown:
                        s.sample({}, 0);
                        break;
                      case metering::UsageSink::StoreState::kUnknown:
                        break;
                    }
                  }));
  }
  if (const observability::SpanBuffer* spans = spans_.get()) {
    add(m.observe(MetricType::kGauge, "sluice_trace_spans_queued",
                  "Finished spans waiting for the trace exporter, all workers.", {},
                  [spans](SampleSink& s) { s.sample({}, static_cast<double>(spans->pending())); }));
    add(m.observe(MetricType::kCounter, "sluice_trace_spans_dropped_total",
                  "Spans dropped because a worker's span queue was full.", {},
                  [spans](SampleSink& s) { s.sample({}, static_cast<double>(spans->dropped())); }));
  }
  if (const http::OtlpExporter* exporter = trace_exporter_.get()) {
    add(m.observe(MetricType::kCounter, "sluice_trace_spans_exported_total",
                  "Spans the collector accepted.", {}, [exporter](SampleSink& s) {
                    s.sample({}, static_cast<double>(exporter->exported_spans()));
                  }));
    add(m.observe(MetricType::kCounter, "sluice_trace_spans_failed_total",
                  "Spans given up on after the export retries failed.", {},
                  [exporter](SampleSink& s) {
                    s.sample({}, static_cast<double>(exporter->failed_spans()));
                  }));
  }
}

void Server::register_tenancy_gauges() {
  using observability::MetricType;
  using observability::SampleSink;
  auto& m = *metrics_;
  const tenancy::KeyDirectory* d = key_directory_.get();
  metric_callbacks_.push_back(m.observe(
      MetricType::kGauge, "sluice_tenancy_refresh_ok",
      "1 while keys and budgets refresh from the store, 0 while the store does not answer (the "
      "last key set keeps serving); absent before the first attempt.",
      {}, [d](SampleSink& s) {
        if (d->refresh_ok() >= 0) {
          s.sample({}, d->refresh_ok());
        }
      }));
  metric_callbacks_.push_back(
      m.observe(MetricType::kGauge, "sluice_tenancy_revision",
                "The store's tenancy revision the serving key set was built from.", {},
                [d](SampleSink& s) { s.sample({}, static_cast<double>(d->revision())); }));
  metric_callbacks_.push_back(m.observe(
      MetricType::kCounter, "sluice_budget_webhook_events_total",
      "Budget threshold events for the webhook: sent (2xx), failed (other answer or no answer in "
      "time), dropped (queue full).",
      {"result"}, [d](SampleSink& s) {
        s.sample({"sent"}, static_cast<double>(d->notifier().sent()));
        s.sample({"failed"}, static_cast<double>(d->notifier().failed()));
        s.sample({"dropped"}, static_cast<double>(d->notifier().dropped()));
      }));
}

bool Server::start_admin() {
  const config::AdminSettings& settings = snapshot_->config().admin;
  admin_router_.add("GET", "/healthz", admin::Access::kPublic, [](const admin::Request&) {
    return admin::Response::json(R"({"status":"ok"})");
  });
  admin_router_.add("GET", "/metrics", admin::Access::kMetrics, [this](const admin::Request&) {
    admin::Response r;
    r.content_type = std::string(observability::MetricsRegistry::kContentType);
    r.body = metrics_->scrape();
    return r;
  });
  if (!settings.enabled) {
    return true;
  }
  if (cache_) {
    cache_routes_ = std::make_unique<admin::CacheRoutes>(
        cache_->answers, cache_redis_settings_ ? &*cache_redis_settings_ : nullptr);
    cache_routes_->add_to(admin_router_);
  }
  if (snapshot_->config().store.kind != config::StoreSettings::Kind::kNone) {
    usage_routes_ = std::make_unique<admin::UsageRoutes>(
        [store = snapshot_->config().store] { return store::open_store(store); },
        [] {
          return std::chrono::duration_cast<std::chrono::milliseconds>(
                     std::chrono::system_clock::now().time_since_epoch())
              .count();
        });
    usage_routes_->add_to(admin_router_);
    {
      std::lock_guard lock(config_keys_mu_);
      config_keys_ = key_names(snapshot_->config());
    }
    tenancy_routes_ = std::make_unique<admin::TenancyRoutes>(
        [store = snapshot_->config().store] { return store::open_store(store); },
        admin::TenancyRoutes::Options{
            [this](std::string_view name) {
              std::lock_guard lock(config_keys_mu_);
              return config_keys_.contains(name);
            },
            [] {
              return std::chrono::duration_cast<std::chrono::milliseconds>(
                         std::chrono::system_clock::now().time_since_epoch())
                  .count();
            }});
    tenancy_routes_->add_to(admin_router_);
  }
  admin_ = std::make_unique<admin::AdminServer>(admin_router_, settings);
  try {
    admin_port_ = admin_->bind();
  } catch (const std::exception& e) {
    spdlog::error("cannot listen on admin.listen {}:{}: {}", settings.listen.host,
                  settings.listen.port, e.what());
    admin_.reset();
    return false;
  }
  return true;
}

}  // namespace sluice::server
