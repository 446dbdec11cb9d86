#pragma once

#include <memory>

#include "guardrails/policy.h"
#include "pipeline/filter.h"
#include "pipeline/filter_chain.h"

namespace sluice::pipeline {

// The input guardrails of a route (docs/guardrails.md): right after decode, before anything is
// charged, looked up or sent, the caller's body goes through the route's policies
// (guardrails/body.h). A block answers the policy's status in the caller's protocol, naming the
// policy and the detector, never the text (code guardrail_blocked). Redactions rewrite the body
// in place (CallContext::replace_body), so a passthrough upstream and a translation both send
// the redacted text, and the cache and Idempotency-Key see only it: two callers' e-mail
// addresses never split an entry or share one. What was found is in ctx.guardrails (the access
// log's `guardrails`) and the `x-sluice-guardrails` response header.
class GuardrailFilter final : public Filter {
 public:
  static std::unique_ptr<Filter> make(const FilterSetup& setup);
  explicit GuardrailFilter(const guardrails::Policies& policies) : policies_(policies) {}

  std::string_view name() const override { return "guardrails"; }
  FilterHooks hooks() const override {
    return {FilterHook::kAfterDecode, FilterHook::kResponseHead};
  }
  FilterStatus after_decode(CallContext& call) override;
  FilterStatus on_response_head(CallContext& call, ResponseHead& head) override;

 private:
  const guardrails::Policies& policies_;  // the route's, in the snapshot the chain was built on
};

}  // namespace sluice::pipeline
