#include "pipeline/filters/affinity_filter.h"

#include "pipeline/affinity.h"
#include "pipeline/call_context.h"
#include "pipeline/pipeline.h"

namespace sluice::pipeline {

namespace {

// By the key's immutable id: a name can be renamed, or taken by another key later.
std::string_view owner_of(const RequestContext& ctx) {
  return ctx.key != nullptr ? std::string_view(ctx.key->id) : std::string_view();
}

}  // namespace

std::unique_ptr<Filter> AffinityFilter::make(const FilterSetup& setup) {
  if (setup.parts.affinity == nullptr) {
    return nullptr;
  }
  return std::make_unique<AffinityFilter>(*setup.parts.affinity);
}

FilterStatus AffinityFilter::after_decode(CallContext& call) {
  const std::string& continues = call.request().continues;
  if (continues.empty()) {
    return FilterStatus::proceed();
  }
  auto record = store_.find(continues, call.clock().now());
  if (!record || record->owner != owner_of(call.ctx())) {
    return FilterStatus::proceed();  // unknown here: the plan's first target answers
  }
  const RouteRuntime& route = call.route();
  bool any_holds_state = false;  // a target of the caller's protocol (others refuse on their own)
  for (std::size_t i = 0; i < route.targets.size(); ++i) {
    const TargetRuntime& t = route.targets[i];
    if (t.provider->config->id == record->provider) {
      call.pin_target(i);
      return FilterStatus::proceed();
    }
    any_holds_state =
        any_holds_state || t.provider->adapter->speaks(call.ingress().protocol(), route.operation);
  }
  if (!any_holds_state) {
    return FilterStatus::proceed();
  }
  return FilterStatus::stop(
      Error(ErrorKind::kBadRequest,
            "previous_response_id '" + continues + "' was stored by provider '" + record->provider +
                "', which model '" + call.request().model +
                "' does not route to; continue it with a model served by that provider")
          .with_code("previous_response_not_found")
          .with_param("previous_response_id"));
}

void AffinityFilter::on_end(CallContext& call) {
  const std::string& id = call.stored_answer_id();
  if (id.empty()) {
    return;
  }
  store_.remember(id, call.stored_answer_provider(), owner_of(call.ctx()), call.clock().now());
}

}  // namespace sluice::pipeline
