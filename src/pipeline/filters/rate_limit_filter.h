#pragma once

#include <memory>

#include "pipeline/filter.h"
#include "pipeline/filter_chain.h"

namespace sluice::pipeline {

class LimitsAdmission;

// Admission by rate limits (pipeline/limits_admission.h): the caller's key, key group and model
// buckets and the concurrency slots, charged once per request before the plan, with the tokens
// the request may use (its prompt's estimate plus CallContext::output_limit, so a route's output
// cap lowers the reservation). A refusal is the 429 in the caller's protocol. In the chain when
// the config has limits or store keys (which carry quotas) are served.
class RateLimitFilter final : public Filter {
 public:
  static std::unique_ptr<Filter> make(const FilterSetup& setup);
  explicit RateLimitFilter(LimitsAdmission& admission) : admission_(admission) {}

  std::string_view name() const override { return "rate_limits"; }
  FilterHooks hooks() const override { return {FilterHook::kBeforePlan}; }
  Awaitable<FilterStatus> before_plan(CallContext& call) override;

 private:
  LimitsAdmission& admission_;
};

}  // namespace sluice::pipeline
