#include "pipeline/filters/budget_filter.h"

#include "pipeline/call_context.h"
#include "pipeline/pipeline.h"
#include "tenancy/budget.h"
#include "tenancy/key_set.h"

namespace sluice::pipeline {

std::unique_ptr<Filter> BudgetFilter::make(const FilterSetup& setup) {
  if (setup.parts.store_keys == nullptr) {
    return nullptr;  // only store keys carry budgets
  }
  return std::make_unique<BudgetFilter>();
}

FilterStatus BudgetFilter::after_decode(CallContext& call) {
  const RequestContext& ctx = call.ctx();
  if (ctx.store_key == nullptr || ctx.store_key->budget == nullptr) {
    return FilterStatus::proceed();
  }
  const std::int64_t now_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(ctx.wall_started.time_since_epoch())
          .count();
  if (ctx.store_key->budget->exhausted(now_ms)) {
    return FilterStatus::stop(tenancy::budget_exhausted(*ctx.store_key->budget, now_ms));
  }
  return FilterStatus::proceed();
}

void BudgetFilter::on_end(CallContext& call) {
  const RequestContext& ctx = call.ctx();
  if (ctx.store_key == nullptr || !ctx.charge || !ctx.charge->priced || ctx.charge->micros <= 0) {
    return;
  }
  for (tenancy::BudgetAccount* account : ctx.store_key->charge_to) {
    if (account != nullptr) {
      account->add(ctx.charge->micros);
    }
  }
}

}  // namespace sluice::pipeline
