#include "pipeline/filters/rate_limit_filter.h"

#include "pipeline/call_context.h"
#include "pipeline/limits_admission.h"
#include "pipeline/pipeline.h"

namespace sluice::pipeline {

namespace {

// Whether the config limits a caller-side layer (provider capacity is another filter's).
bool limits_callers(const config::LimitSettings& l) {
  return l.key.any() || !l.keys.empty() || !l.groups.empty() || !l.models.empty() ||
         l.instance_concurrency != 0;
}

}  // namespace

std::unique_ptr<Filter> RateLimitFilter::make(const FilterSetup& setup) {
  if (setup.parts.limits == nullptr) {
    return nullptr;
  }
  // Store keys carry quotas of their own, whatever the config says.
  if (!limits_callers(setup.snapshot.config().limits) && setup.parts.store_keys == nullptr) {
    return nullptr;
  }
  return std::make_unique<RateLimitFilter>(*setup.parts.limits);
}

Awaitable<FilterStatus> RateLimitFilter::before_plan(CallContext& call) {
  const std::uint64_t tokens = LimitsAdmission::reserve_tokens(call.request(), call.output_limit());
  std::optional<Error> refused = co_await admission_.admit(call.ctx(), tokens);
  if (refused) {
    co_return FilterStatus::stop(std::move(*refused));
  }
  co_return FilterStatus::proceed();
}

}  // namespace sluice::pipeline
