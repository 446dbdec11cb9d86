#pragma once

#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "cache/semantic_index.h"
#include "core/error.h"
#include "guardrails/external.h"
#include "guardrails/policy.h"
#include "pipeline/filter.h"
#include "providers/base_url.h"

namespace sluice::pipeline {

class CallContext;
struct ProviderRuntime;
struct RouteRuntime;
class Snapshot;

// The external checkers of a route's input policies (docs/guardrails.md#external-checkers):
// after the in-process detectors, before the plan (so before rate limits, Idempotency-Key and
// the cache), the request's text (redacted already) is POSTed to each checker of the caller's
// policies, one after another, over the worker's pool of the provider entry the checker names.
// A find flags or blocks as its detector says (a generic checker's own `block` blocks). A
// checker that fails (no answer within its timeout, a non-2xx, an answer of another shape) or
// whose breaker is open (3 failures in a row: skipped for 30 s, then one probe) blocks the
// request with a 503 `guardrail_unavailable` (fail closed, the default), or with
// `on_error: allow` lets it go with `<policy>/<checker>:unchecked=1` in the verdict (fail
// open). One per filter (worker, route): its breakers are this worker's.
class GuardrailChecks {
 public:
  GuardrailChecks(const Snapshot& snapshot, const RouteRuntime& route);

  // Whether any policy the route may apply has a checker.
  bool empty() const { return checkers_.empty(); }
  // Runs the checkers of `policies` on the call's request; the finds go into the request's
  // verdict. The error the call ends with, or nullopt to go on.
  Awaitable<std::optional<Error>> run(CallContext& call, const guardrails::Policies& policies);

 private:
  struct Checker {
    const guardrails::Policy::External* external = nullptr;
    const ProviderRuntime* provider = nullptr;
    providers::BaseUrl url;
    cache::SkipBreaker breaker;
  };
  // The verdict, or nullopt when the checker failed or was skipped (its breaker is open).
  Awaitable<std::optional<guardrails::CheckerVerdict>> ask(CallContext& call, Checker& checker,
                                                           std::string_view text);

  std::vector<std::unique_ptr<Checker>> checkers_;
};

}  // namespace sluice::pipeline
