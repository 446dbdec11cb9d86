#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/result.h"
#include "store/store.h"

namespace sluice::store {

// The usage report both `sluice usage` and the admin listener's usage endpoint offer: one
// parameter syntax, one set of renderings, so the CLI and HTTP answers agree to the byte.
// Pure functions (no I/O, no clock: the caller passes now).

enum class ReportFormat : std::uint8_t { kTable, kJson, kCsv };

struct UsageReportRequest {
  UsageQuery query;
  ReportFormat format = ReportFormat::kTable;
};

// Parameter names in the order they are documented: by, since, until, key, key_group, tenant,
// feature, alias, provider, model, outcome, limit, format.
const std::vector<std::string_view>& usage_report_parameters();

// Parses key/value parameters (CLI flags without the dashes, or a query string's pairs):
//   by=key,model              group by these dimensions (to_string(Dimension) names)
//   since=7d | 24h | 90m | 2026-11-01 | 2026-11-01T10:00:00Z   from (inclusive); a date is
//                            its UTC midnight, a date-time is RFC 3339 (Z or an offset)
//   until=... same forms                                      to (exclusive)
//   key= key_group= tenant= feature= alias= provider= model= outcome=   exact matches
//   limit=N (1..100000, default 1000)   format=table|json|csv
// A relative time is that long before `now_ms`. Unknown or repeated parameters, an unknown
// dimension, a malformed time or limit, and since >= until are kBadRequest errors whose
// message names the parameter and what it expects.
Result<UsageReportRequest> parse_usage_report(
    const std::vector<std::pair<std::string, std::string>>& params, std::int64_t now_ms);

// One time parameter alone (the forms above); nullopt when malformed.
std::optional<std::int64_t> parse_report_time(std::string_view text, std::int64_t now_ms);

// Rows as JSON ({"from":..,"to":..,"group_by":[..],"rows":[{..}]}), CSV (a header line, RFC
// 4180 quoting; text cells that a spreadsheet would run as a formula get a leading ') or a
// fixed-width table for people. Cost is exact decimal currency units from integer micros
// ("12.345678"); unaccounted is its own column, never part of cost. Every rendering ends in a
// newline.
std::string render_usage(const UsageQuery& query, const std::vector<UsageRow>& rows,
                         ReportFormat format);

// One stored record with its attempts and timings, for "why was this request slow": a
// readable block (kTable; kCsv is treated as kTable) or the record as JSON.
std::string render_usage_record(const UsageRecord& record, ReportFormat format);

// Integer micro-units as a decimal with six places: 12345678 -> "12.345678", -5 -> "-0.000005".
std::string format_micros(std::int64_t micros);

}  // namespace sluice::store
