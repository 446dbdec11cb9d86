#pragma once

#include <memory>
#include <optional>
#include <span>
#include <string_view>

#include <boost/asio/any_io_executor.hpp>

#include "codec/request_head.h"
#include "core/clock.h"
#include "core/error.h"
#include "observability/metrics.h"
#include "pipeline/affinity.h"
#include "pipeline/downstream.h"
#include "pipeline/filter_chain.h"
#include "pipeline/observer.h"
#include "pipeline/request_context.h"
#include "pipeline/snapshot.h"
#include "pipeline/upstream_connector.h"
#include "tenancy/key_set.h"

namespace sluice::cache {
struct CacheState;
class SharedStore;
}  // namespace sluice::cache

namespace sluice::pipeline {

// What the pipeline needs from the process it runs in (one per worker).
class Host {
 public:
  virtual ~Host() = default;
  // The snapshot new requests are served from.
  virtual std::shared_ptr<const Snapshot> current_snapshot() const = 0;
  // Readiness: false while the server drains.
  virtual bool draining() const = 0;
};

class LimitsAdmission;
class InternalCalls;

struct PipelineParts {
  Host* host = nullptr;
  UpstreamConnector* connector = nullptr;
  Sleeper* sleeper = nullptr;                   // null: retries do not wait (tests)
  const Clock* clock = nullptr;                 // RealClock::instance() in production
  std::span<RequestObserver* const> observers;  // called in order
  // This worker's rate limiter (the rate_limits and provider_capacity filters); null: no limits.
  LimitsAdmission* limits = nullptr;
  // Keys from the store (tenancy/key_directory.h), looked up after the config's keys; null:
  // config keys only (and no budgets).
  const tenancy::KeySetHolder* store_keys = nullptr;
  // Which provider stored which answer (shared by every worker); null: nothing is remembered and
  // GETs of stored objects answer 404.
  ResponseAffinity* affinity = nullptr;
  // The answer cache: stored answers and shared calls (every worker's); null: no route caches.
  cache::CacheState* cache = nullptr;
  // This worker's clients of the store the instances share, for answers (cache.redis) and for
  // Idempotency-Key replays (idempotency.redis); null: this instance alone.
  cache::SharedStore* shared_answers = nullptr;
  cache::SharedStore* shared_replays = nullptr;
  // Answers GET /metrics on the main listener when the config says admin.metrics_on_main;
  // null: never.
  const observability::MetricsRegistry* metrics = nullptr;
  // The calls this worker makes of itself (pipeline/internal_call.h); null: none (a semantic
  // cache skips its lookup, a stale entry is refreshed by the request that finds it).
  InternalCalls* internal_calls = nullptr;
  std::size_t worker = 0;  // for logs
  // Filters appended to every chain after the registered ones (not owned).
  std::span<Filter* const> extra_filters_for_test;
};

// One request's way through the gateway, as named phases over one RequestContext (the shape
// of Pingora's ProxyHttp): the transport calls them in order and never interprets a request.
//
//   begin      first byte of a request arrived: pin the snapshot, stamp the start
//   on_head    head read: endpoint, method, authenticate, declared size (before the body is
//              read or 100-continue is sent)
//   serve      body read: the model call (model_call.h: decode, route, the filter chain around
//              the attempt loop), a stored object's GET, or an ops endpoint
//   reject     the transport could not read the request (408, 413, 431, malformed): answer in
//              the caller's protocol
//   end        the request is over: observers' on_finish
//
// No phase knows a protocol or a provider by name: ingress codecs (protocol/registry.h) and
// provider adapters (providers/registry.h) carry the variety; docs/life_of_a_request.md walks
// through it. One Pipeline per worker; all calls on that worker's thread.
class Pipeline {
 public:
  explicit Pipeline(PipelineParts parts);

  void begin(RequestContext& ctx) const;
  // The request line is known (even if the rest of the head was refused): picks the protocol
  // that answers errors for this target.
  void on_request_line(RequestContext& ctx, std::string_view method, std::string_view target) const;
  // Checks that need only the head. A returned error is answered (reject) without reading the
  // body; the transport then closes the connection.
  std::optional<Error> on_head(RequestContext& ctx, const codec::RequestHead& head) const;
  // Serves a request whose head and body are read. Writes exactly one response (or stream).
  Awaitable<void> serve(RequestContext& ctx, const codec::RequestHead& head, std::string_view body,
                        Downstream& downstream) const;
  // Answers `error` in the caller's protocol (x-should-retry and Retry-After included).
  Awaitable<void> reject(RequestContext& ctx, const Error& error, Downstream& downstream) const;
  void end(RequestContext& ctx) const;

  const Clock& clock() const { return *parts_.clock; }
  InternalCalls* internal_calls() const { return parts_.internal_calls; }
  // Opens exchanges over this worker's pools (the guardrails' external checkers use it too).
  UpstreamConnector* connector() const { return parts_.connector; }
  // The filter chains of `snapshot`'s routes on this worker, built when the worker first serves
  // a request of that version.
  std::shared_ptr<const RouteChains> chains(const std::shared_ptr<const Snapshot>& snapshot) const;

 private:
  friend class CallContext;
  friend class ModelCall;
  friend class StoredObjectCall;
  // The body of an ops endpoint (health, readiness, model list), filling `res`.
  std::string ops_answer(RequestContext& ctx, ResponseHead& res) const;
  std::string ready_detail(const RequestContext& ctx) const;
  // The presented credential: a config key, else an active store key (whose key set the
  // request then holds); the 401 otherwise.
  std::optional<Error> authenticate(RequestContext& ctx, std::string_view presented) const;

  PipelineParts parts_;
  // This worker's copy of the store's key set (reloaded when the holder publishes a new one).
  mutable tenancy::KeySetCache store_keys_;
  mutable std::shared_ptr<const RouteChains> chains_;  // of the newest snapshot seen
};

}  // namespace sluice::pipeline
