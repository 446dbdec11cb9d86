#pragma once

#include <array>
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

// The external checkers of a route's policies (docs/guardrails.md#external-checkers), POSTed
// the text, one after another, over the worker's pool of the provider entry the checker names,
// at one of three stages (Stage): a request's text (redacted already) before the plan, so
// before rate limits, Idempotency-Key and the cache; a request's text while the upstream
// answers (`mode: parallel`); a complete answer's text before it is released.
// A find flags or blocks as its detector says (a generic checker's own `block` blocks). A
// checker that fails (no answer within its timeout, a non-2xx, an answer of another shape) or
// whose breaker is open (3 failures in a row: skipped for 30 s, then one probe) blocks the
// request with a 503 `guardrail_unavailable` (fail closed, the default), or with
// `on_error: allow` lets it go with `<policy>/<checker>:unchecked=1` in the verdict (fail
// open). One per filter (worker, route): its breakers are this worker's.
class GuardrailChecks {
 public:
  GuardrailChecks(const Snapshot& snapshot, const RouteRuntime& route);

  enum class Stage : std::uint8_t {
    kBeforeSend,      // input policies' sequential checkers, on the request
    kBesideUpstream,  // input policies' parallel checkers, on the request
    kAnswer,          // output policies' checkers, on a complete answer
  };
  // Whether any policy the route may apply has a checker for `stage`.
  bool any(Stage stage) const { return stages_[static_cast<std::size_t>(stage)]; }
  // Runs the checkers of `policies` for `stage` on the text of `body` (the request's or, at
  // kAnswer, the answer's, as guardrails::body_text reads it; read before the first checker is
  // asked, only if one is); the finds go into the request's verdict. The error the call ends
  // with, or nullopt to go on.
  Awaitable<std::optional<Error>> run(CallContext& call, const guardrails::Policies& policies,
                                      Stage stage, std::string_view body);
  // The same on text already read: a streamed answer's window (StreamGuard::unchecked_text).
  Awaitable<std::optional<Error>> run_on_text(CallContext& call,
                                              const guardrails::Policies& policies, Stage stage,
                                              std::string_view text);
  // How many characters of a streamed answer's new text make its output checkers be asked
  // (the smallest stream_window_chars of theirs).
  std::size_t stream_window() const { return stream_window_; }

 private:
  struct Checker {
    const guardrails::Policy::External* external = nullptr;
    const ProviderRuntime* provider = nullptr;
    providers::BaseUrl url;
    cache::SkipBreaker breaker;
  };
  // The verdict, or nullopt when the checker failed or was skipped (its breaker is open).
  Awaitable<std::optional<guardrails::CheckerVerdict>> ask(CallContext& call, Checker& checker,
                                                           std::string_view text,
                                                           guardrails::Direction direction);

  std::vector<std::unique_ptr<Checker>> checkers_;
  std::array<bool, 3> stages_{};
  std::size_t stream_window_ = 0;
};

}  // namespace sluice::pipeline
