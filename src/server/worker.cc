#include "server/worker.h"

#include <sys/socket.h>

#include "core/thread_name.h"
#include "server/session.h"
#include "spdlog/spdlog.h"

namespace sluice::server {
namespace net = http::net;
using http::use_nothrow;

std::shared_ptr<http::ConnectionLimit> SharedState::connection_limit(const std::string& provider_id,
                                                                     std::uint32_t max) {
  std::lock_guard lock(limits_mu_);
  auto& limit = limits_[provider_id];
  if (!limit) {
    limit = std::make_shared<http::ConnectionLimit>(max);
  } else {
    limit->set_max(max);
  }
  return limit;
}

void SharedState::for_each_connection_limit(
    const std::function<void(const std::string&, const http::ConnectionLimit&)>& fn) {
  std::lock_guard lock(limits_mu_);
  for (const auto& [provider, limit] : limits_) {
    fn(provider, *limit);
  }
}

namespace {

pipeline::PipelineParts pipeline_parts(Worker& worker, pipeline::UpstreamConnector& connector,
                                       pipeline::Sleeper& sleeper,
                                       std::span<pipeline::RequestObserver* const> observers,
                                       std::size_t index) {
  pipeline::PipelineParts parts;
  parts.host = &worker;
  parts.connector = &connector;
  parts.sleeper = &sleeper;
  parts.clock = &RealClock::instance();
  parts.observers = observers;
  parts.worker = index;
  parts.affinity = &worker.shared().affinity;
  parts.cache = worker.shared().cache;
  parts.shared_answers = worker.shared_answers();
  parts.shared_replays = worker.shared_replays();
  parts.limits = worker.limits_admission();
  parts.store_keys = worker.shared().store_keys;
  parts.metrics = worker.shared().metrics;
  parts.internal_calls = &worker.internal_calls();
  return parts;
}

std::unique_ptr<redis::AnswerTier> answer_tier(net::io_context& ioc, redis::Health* health,
                                               const config::StateSettings* settings,
                                               const std::string& instance) {
  if (health == nullptr || settings == nullptr) {
    return nullptr;
  }
  return std::make_unique<redis::AnswerTier>(ioc, *settings, *health, instance);
}

// Appends an optional observer (traces, usage records, admission) when there is one;
// `observers` is complete before the pipeline takes its view of it.
std::vector<pipeline::RequestObserver*>& add_observer(
    std::vector<pipeline::RequestObserver*>& observers, pipeline::RequestObserver* observer) {
  if (observer != nullptr) {
    observers.push_back(observer);
  }
  return observers;
}

}  // namespace

Worker::Worker(std::size_t index, SharedState& shared,
               std::shared_ptr<const pipeline::Snapshot> snapshot)
    : index_(index),
      shared_(shared),
      snapshot_(std::move(snapshot)),
      access_log_observer_(*shared.access_log, index),
      metrics_observer_(shared.metrics->shard(index), *shared.request_metrics),
      in_flight_(&shared.metrics->shard(index).at(shared.request_metrics->in_flight, {})),
      usage_observer_(shared.usage_sink != nullptr
                          ? std::make_unique<pipeline::UsageObserver>(*shared.usage_sink, index)
                          : nullptr),
      limits_admission_(shared.limits != nullptr ? std::make_unique<pipeline::LimitsAdmission>(
                                                       *shared.limits, ioc_, index)
                                                 : nullptr),
      trace_observer_(shared.spans != nullptr
                          ? std::make_unique<pipeline::TraceObserver>(*shared.spans, index)
                          : nullptr),
      shared_answers_(
          answer_tier(ioc_, shared.cache_redis, shared.cache_redis_settings, shared.instance_id)),
      shared_replays_(
          answer_tier(ioc_, shared.replay_redis, shared.replay_redis_settings, shared.instance_id)),
      observers_{&access_log_observer_, &metrics_observer_},
      pipeline_(
          pipeline_parts(*this, connector_, sleeper_,
                         add_observer(add_observer(add_observer(observers_, usage_observer_.get()),
                                                   limits_admission_.get()),
                                      trace_observer_.get()),
                         index)) {}

Worker::~Worker() {
  for (auto& [id, pool] : pools_) {
    pool->shutdown();
  }
}

std::uint16_t Worker::bind(const tcp::endpoint& endpoint) {
  acceptor_.open(endpoint.protocol());
  acceptor_.set_option(net::socket_base::reuse_address(true));
  int one = 1;
  if (::setsockopt(acceptor_.native_handle(), SOL_SOCKET, SO_REUSEPORT, &one, sizeof one) != 0) {
    throw std::system_error(errno, std::generic_category(), "setsockopt(SO_REUSEPORT)");
  }
  acceptor_.bind(endpoint);
  acceptor_.listen(net::socket_base::max_listen_connections);
  return acceptor_.local_endpoint().port();
}

void Worker::run() {
  name_this_thread("sluice-w" + std::to_string(index_));
  if (limits_admission_) {
    limits_admission_->start();  // on this thread: the Redis connection lives on ioc_
  }
  for (redis::AnswerTier* tier : {shared_answers_.get(), shared_replays_.get()}) {
    if (tier != nullptr) {
      tier->start();
    }
  }
  net::co_spawn(ioc_, accept_loop(), [this](std::exception_ptr e) {
    if (e) {
      try {
        std::rethrow_exception(e);
      } catch (const std::exception& ex) {
        spdlog::error("worker {}: accept loop failed: {}", index_, ex.what());
      }
    }
  });
  net::co_spawn(ioc_, timer_anchor(), net::detached);
  ioc_.run();
}

// Keeps a timer due within kAnchorPeriod armed on this worker at all times. Asio reprograms
// its timerfd (one syscall) whenever a newly scheduled timer becomes the earliest; on a
// lightly loaded worker every request's deadlines (read, write, first byte, total, idle:
// all seconds away) did that, five timerfd_settime calls per request at concurrency 1
// (strace). With the anchor always earlier, request timers never are, and the cost is one
// reprogramming per period. Ends once the worker drains and its last session is gone, so
// io_context::run() can return.
Awaitable<void> Worker::timer_anchor() {
  static constexpr std::chrono::milliseconds kAnchorPeriod{250};
  net::steady_timer anchor(ioc_);
  while (!(draining_ && sessions_.empty() && internal_calls_.in_flight() == 0)) {
    anchor.expires_after(kAnchorPeriod);
    co_await anchor.async_wait(use_nothrow);
  }
}

Awaitable<void> Worker::accept_loop() {
  for (;;) {
    auto [ec, socket] = co_await acceptor_.async_accept(use_nothrow);
    if (ec) {
      if (ec == net::error::operation_aborted || !acceptor_.is_open()) {
        co_return;  // draining
      }
      // EMFILE and friends: back off briefly instead of spinning.
      spdlog::warn("worker {}: accept failed: {}", index_, ec.message());
      net::steady_timer t(ioc_, std::chrono::milliseconds(50));
      co_await t.async_wait(use_nothrow);
      continue;
    }
    const auto max = snapshot_->config().server.max_connections;
    if (shared_.connections.fetch_add(1, std::memory_order_relaxed) >= max) {
      shared_.connections.fetch_sub(1, std::memory_order_relaxed);
      // Over the connection limit: answer with a canned 503 and close, without a session.
      static constexpr std::string_view kBusy =
          "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\n"
          "Retry-After: 1\r\nConnection: close\r\nContent-Length: 105\r\n\r\n"
          R"({"error":{"message":"too many connections","type":"server_error","param":null,"code":"connection_limit"}})";
      boost::system::error_code ignored;
      socket.non_blocking(true, ignored);
      socket.send(net::buffer(kBusy), 0, ignored);
      socket.close(ignored);
      continue;
    }
    socket.set_option(tcp::no_delay(true));
    active_.fetch_add(1, std::memory_order_acq_rel);
    auto session = std::make_shared<Session>(*this, std::move(socket));
    net::co_spawn(ioc_, session->run(), [this, session](std::exception_ptr e) mutable {
      if (e) {
        try {
          std::rethrow_exception(e);
        } catch (const std::exception& ex) {
          spdlog::error("worker {}: session failed: {}", index_, ex.what());
        }
      }
      session.reset();
      shared_.connections.fetch_sub(1, std::memory_order_relaxed);
      active_.fetch_sub(1, std::memory_order_acq_rel);
    });
  }
}

void Worker::publish(std::shared_ptr<const pipeline::Snapshot> snapshot) {
  net::post(ioc_, [this, snapshot = std::move(snapshot)]() mutable {
    if (snapshot->version() > snapshot_->version()) {
      snapshot_ = std::move(snapshot);
    }
  });
}

void Worker::begin_drain() {
  net::post(ioc_, [this] {
    draining_ = true;
    boost::system::error_code ignored;
    acceptor_.close(ignored);
    for (Session* s : sessions_) {
      s->close_if_idle();
    }
  });
}

void Worker::force_close() {
  net::post(ioc_, [this] {
    // Copy: force_close may complete handlers that unregister sessions.
    std::vector<Session*> all(sessions_.begin(), sessions_.end());
    for (Session* s : all) {
      s->force_close();
    }
    internal_calls_.cut_all();
  });
}

std::shared_ptr<http::UpstreamPool> Worker::pool_for(const providers::ProviderAdapter& adapter) {
  const std::shared_ptr<const providers::Endpoint>& endpoint = adapter.endpoint_ptr();
  auto it = pools_.find(endpoint->provider_id);
  if (it != pools_.end() && it->second->endpoint().fingerprint == endpoint->fingerprint) {
    return it->second;
  }
  auto limit = shared_.connection_limit(endpoint->provider_id, endpoint->pool.max_connections);
  auto pool = std::make_shared<http::UpstreamPool>(ioc_.get_executor(), endpoint, limit);
  limit->add_pool(pool);
  if (it != pools_.end()) {
    it->second->shutdown();  // in-flight calls keep the old pool alive until they finish
    it->second = pool;
  } else {
    pools_.emplace(endpoint->provider_id, pool);
  }
  return pool;
}

std::list<Session*>::iterator Worker::add_session(Session* s) {
  return sessions_.insert(sessions_.end(), s);
}

void Worker::remove_session(std::list<Session*>::iterator it) { sessions_.erase(it); }

}  // namespace sluice::server
