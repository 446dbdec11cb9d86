#pragma once

#include <memory>

#include "pipeline/filter.h"
#include "pipeline/filter_chain.h"

namespace sluice::pipeline {

class LimitsAdmission;

// A provider's capacity (`limits.providers`), charged for each attempt to the provider the
// attempt actually goes to (a failover target's capacity included; the caller's own buckets
// are charged once, by RateLimitFilter). A full provider refuses the attempt with a retryable
// 429, so the plan moves on to the next target; the caller gets the 429 only when none is left.
// In the chain of routes with a limited provider among their targets.
class ProviderCapacityFilter final : public Filter {
 public:
  static std::unique_ptr<Filter> make(const FilterSetup& setup);
  explicit ProviderCapacityFilter(LimitsAdmission& admission) : admission_(admission) {}

  std::string_view name() const override { return "provider_capacity"; }
  FilterHooks hooks() const override { return {FilterHook::kBeforeAttempt}; }
  Awaitable<FilterStatus> before_attempt(CallContext& call, UpstreamRequest& attempt) override;

 private:
  LimitsAdmission& admission_;
};

}  // namespace sluice::pipeline
