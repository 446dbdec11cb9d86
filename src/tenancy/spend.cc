#include "tenancy/spend.h"

#include "tenancy/budget.h"
#include "tenancy/money.h"

namespace sluice::tenancy {

Result<std::int64_t> spent_in_period(store::Store& store, const SpendCap& cap, const TimeZone& zone,
                                     std::int64_t now_ms) {
  auto rows = store.spend_since(budget_period(cap.budget, zone, now_ms).start_ms);
  if (!rows) {
    return std::move(rows).error();
  }
  std::int64_t sum = 0;
  for (const store::SpendRow& row : *rows) {
    if (row.key_group == cap.group && (cap.key_id.empty() || row.key_id == cap.key_id)) {
      sum = saturating_add(sum, row.cost_micros);
    }
  }
  return sum;
}

}  // namespace sluice::tenancy
