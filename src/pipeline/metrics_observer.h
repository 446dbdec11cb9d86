#pragma once

#include "observability/metrics.h"
#include "pipeline/observer.h"

namespace sluice::pipeline {

// The request metrics' families, registered once per process (before the workers start) and
// shared by every worker's MetricsObserver. docs/observability.md lists each with its labels.
struct RequestMetrics {
  // Registers (or finds) every family in `registry`. Start-up; throws what
  // MetricsRegistry::add throws.
  static RequestMetrics register_in(observability::MetricsRegistry& registry);

  observability::FamilyId requests;     // alias, provider, model, status, outcome
  observability::FamilyId attempts;     // provider, model, result
  observability::FamilyId retries;      // provider, model, reason, kind (retry | failover)
  observability::FamilyId retry_stops;  // reason
  observability::FamilyId tokens;       // key, model; type fixed
  observability::FamilyId cost;         // key, model, currency
  observability::FamilyId unaccounted;  // key, model
  observability::FamilyId drift;        // provider; kind fixed
  observability::FamilyId overhead;     // histogram, no labels
  observability::FamilyId ttfb;         // histogram: provider, model
  observability::FamilyId ttft;         // histogram: provider, model
  observability::FamilyId output_rate;  // histogram: provider, model
  observability::FamilyId duration;     // histogram: alias
  observability::FamilyId cache;  // alias, result (hit, stale, miss, refresh, coalesced, bypass)
  observability::FamilyId
      cache_saved;  // alias: upstream tokens a hit or a follower did not pay for
  // alias, policy, detector, action, direction (input | output): guardrail finds
  observability::FamilyId guardrails;
  // Gauge, no labels: requests between their first byte and their end. The transport moves it
  // (the worker's share in its own shard), since observers see requests only as they end.
  observability::FamilyId in_flight;
};

// Counts every request into its worker's metrics shard: one per worker, called on that worker's
// thread (RequestObserver). A handful of lookups in worker-local memory per request; label
// values come only from the pinned snapshot (alias, provider, model, key name) and from small
// fixed sets (status, outcome, result), never from the request itself.
class MetricsObserver final : public RequestObserver {
 public:
  MetricsObserver(observability::MetricsShard& shard, const RequestMetrics& families)
      : shard_(shard), families_(families) {}

  void on_attempt(const RequestContext& ctx, const Attempt& attempt) override;
  void on_finish(const RequestContext& ctx) override;

 private:
  void count_drift(const RequestContext& ctx, std::string_view provider);

  observability::MetricsShard& shard_;
  RequestMetrics families_;
};

// The metrics label of an attempt's result: "2xx", "4xx", "429", "5xx" for an answer, the
// error kind's name (e.g. "upstream_timeout") when no answer came or the stream broke.
std::string_view attempt_result(const Attempt& attempt);
// An HTTP status as decimal text without allocation ("0" to "999"; "other" outside).
std::string_view status_label(int status);

}  // namespace sluice::pipeline
