#pragma once

#include <memory>

#include "guardrails/policy.h"
#include "pipeline/filter.h"
#include "pipeline/filter_chain.h"
#include "pipeline/filters/guardrail_checks.h"

namespace sluice::guardrails {
class StreamGuard;
}  // namespace sluice::guardrails

namespace sluice::pipeline {

// The guardrails of a route (docs/guardrails.md), first in its chain.
//
// External checkers (guardrail_checks.h) on a request run before the plan, after the
// in-process detectors, on the text those left; with `mode: parallel`, beside the call instead
// (the alongside hook: the upstream is asked at once, and the answer waits in before_release
// for the verdict; a block cancels the upstream call and is answered instead). Checkers of
// output policies see a complete answer before it is released, before the response hooks
// (so a blocked answer is never cached); a stream's text is asked about in windows
// (check_stream_data: each stream_window_chars of new text and the end, with hold_back_chars of
// context), and no event goes out before the checkers cleared its text.
//
// Input: right after decode, before anything is charged, looked up or sent, the caller's body
// goes through the route's input policies (guardrails/body.h). A block answers the policy's
// status in the caller's protocol, naming the policy and the detector, never the text (code
// guardrail_blocked). Redactions rewrite the body in place (CallContext::replace_body), so a
// passthrough upstream and a translation both send the redacted text, and the cache and
// Idempotency-Key see only it.
//
// Output: a complete answer goes through the output policies before it is sent (a block
// answers the error instead, a redaction rewrites it); a stream's events are held back by the
// policies' hold_back_chars (guardrails/stream_guard.h), so a block ends the stream with the
// protocol's error event before any byte of the match went out. Response-side hooks run in
// chain order, so the cache and the single-flight fan-out, after this filter, only ever see
// what the output policies let through: a blocked answer is never stored or fanned out.
//
// The policies are the route's (config-wide `apply`, then its own), plus those of the caller's
// key group when `guardrails.key_groups` gives it some.
//
// What was found is in ctx.guardrails (the access log's `guardrails`; output finds prefixed
// `out:`) and, for the input, the `x-sluice-guardrails` response header.
class GuardrailFilter final : public Filter {
 public:
  static std::unique_ptr<Filter> make(const FilterSetup& setup);
  GuardrailFilter(const Snapshot& snapshot, const RouteRuntime& route);

  std::string_view name() const override { return "guardrails"; }
  FilterHooks hooks() const override;
  FilterStatus after_decode(CallContext& call) override;
  Awaitable<FilterStatus> before_plan(CallContext& call) override;
  Awaitable<void> alongside(CallContext& call) override;
  Awaitable<FilterStatus> before_release(CallContext& call, const std::string* answer) override;
  FilterStatus on_response_head(CallContext& call, ResponseHead& head) override;
  FilterStatus on_response_body(CallContext& call, std::string& body) override;
  Awaitable<FilterStatus> check_stream_data(CallContext& call, std::string& data,
                                            bool ending) override;
  FilterStatus on_stream_data(CallContext& call, std::string& data) override;
  void on_end(CallContext& call) override;

 private:
  struct Call;
  // The input policies' in-process detectors on the request (after_decode's work).
  FilterStatus inspect_request(CallContext& call);
  // The stream guard of this request, made on its first write.
  guardrails::StreamGuard& stream_guard(CallContext& call, Call& state) const;
  // The policies of this request: the route's, or its key group's (RouteRuntime).
  const guardrails::Policies& input(const CallContext& call) const;
  const guardrails::Policies& output(const CallContext& call) const;

  const RouteRuntime& route_;  // in the snapshot the chain was built on
  GuardrailChecks checks_;     // the external checkers of its input policies
  std::size_t hold_back_ = 0;  // the largest hold_back_chars of any output policy it may apply
  std::chrono::milliseconds hold_back_time_{0};  // their hold_back_ms, if every one sets it
};

}  // namespace sluice::pipeline
