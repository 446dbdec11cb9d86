#pragma once

#include <string>
#include <string_view>

#include "core/result.h"
#include "store/usage_record.h"

namespace sluice::metering {

// A usage record as one JSON object (the spool's frame payload). Every field round-trips;
// fields missing on reading keep their defaults, so a spool written by an older build
// still replays.
std::string record_to_json(const store::UsageRecord& record);
Result<store::UsageRecord> record_from_json(std::string_view json);

}  // namespace sluice::metering
