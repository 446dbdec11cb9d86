#pragma once

#include <cstdint>

#include "core/result.h"
#include "core/time_zone.h"
#include "store/store.h"
#include "tenancy/rules.h"

namespace sluice::tenancy {

// What the subject of `cap` (its group, or one key of it) spent in the period of cap.budget
// that contains `now_ms` (`zone` is the budget's time zone, loaded by the caller), per the usage
// ledger (store::Store::spend_since), summed saturating. Blocking: a store query; its error
// when it fails.
Result<std::int64_t> spent_in_period(store::Store& store, const SpendCap& cap, const TimeZone& zone,
                                     std::int64_t now_ms);

}  // namespace sluice::tenancy
