#include "pipeline/filters/guardrail_filter.h"

#include "guardrails/body.h"
#include "pipeline/call_context.h"

namespace sluice::pipeline {

std::unique_ptr<Filter> GuardrailFilter::make(const FilterSetup& setup) {
  if (setup.route.guardrails.empty()) {
    return nullptr;
  }
  return std::make_unique<GuardrailFilter>(setup.route.guardrails);
}

FilterStatus GuardrailFilter::after_decode(CallContext& call) {
  guardrails::Inspector inspector(policies_);
  std::optional<std::string> redacted = guardrails::inspect_body(call.request().body, inspector);
  const guardrails::Verdict& verdict = inspector.verdict();
  if (verdict.empty()) {
    return FilterStatus::proceed();
  }
  call.ctx().guardrails = verdict.summary();
  if (const guardrails::Verdict::Hit* block = verdict.block()) {
    const std::string what = block->detector == "uninspected"
                                 ? "content it cannot inspect (an image, audio or a file)"
                                 : "\"" + std::string(block->detector) + "\"";
    return FilterStatus::stop(Error(ErrorKind::kBadRequest, block->policy->block_status(),
                                    "The request was blocked by guardrail policy \"" +
                                        block->policy->name() + "\": it contains " + what + ".")
                                  .with_code("guardrail_blocked"));
  }
  if (redacted) {
    if (std::optional<Error> invalid = call.replace_body(std::move(*redacted))) {
      return FilterStatus::stop(std::move(*invalid));
    }
  }
  return FilterStatus::proceed();
}

FilterStatus GuardrailFilter::on_response_head(CallContext& call, ResponseHead& head) {
  if (!call.ctx().guardrails.empty()) {
    head.headers.add("x-sluice-guardrails", call.ctx().guardrails);
  }
  return FilterStatus::proceed();
}

}  // namespace sluice::pipeline
