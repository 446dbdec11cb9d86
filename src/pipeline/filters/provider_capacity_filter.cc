#include "pipeline/filters/provider_capacity_filter.h"

#include "pipeline/call_context.h"
#include "pipeline/limits_admission.h"
#include "pipeline/pipeline.h"
#include "pipeline/upstream_request.h"

namespace sluice::pipeline {

std::unique_ptr<Filter> ProviderCapacityFilter::make(const FilterSetup& setup) {
  if (setup.parts.limits == nullptr) {
    return nullptr;
  }
  const auto& limited = setup.snapshot.config().limits.providers;
  for (const TargetRuntime& target : setup.route.targets) {
    if (limited.contains(target.provider->config->id)) {
      return std::make_unique<ProviderCapacityFilter>(*setup.parts.limits);
    }
  }
  return nullptr;
}

Awaitable<FilterStatus> ProviderCapacityFilter::before_attempt(CallContext& call,
                                                               UpstreamRequest& attempt) {
  const std::uint64_t tokens = LimitsAdmission::reserve_tokens(call.request(), call.output_limit());
  std::optional<Error> refused =
      co_await admission_.admit_attempt(call.ctx(), attempt.adapter().id(), tokens);
  if (refused) {
    co_return FilterStatus::stop(std::move(*refused));
  }
  co_return FilterStatus::proceed();
}

}  // namespace sluice::pipeline
