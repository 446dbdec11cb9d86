#pragma once

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "core/result.h"
#include "store/migrations.h"
#include "store/store.h"

namespace sluice::store {

// The usage ledger's statements, written once for both backends: the SQL differs only in
// placeholders ($1 vs ?), day/hour bucketing and collation, so both return the same rows.

using SqlParam = std::variant<std::int64_t, std::string>;

struct SqlText {
  std::string sql;
  std::vector<SqlParam> params;  // $1.. / ? in order
};

// INSERT of `rows` records, every usage_columns() column one parameter each, skipping any whose
// record_id is stored already (or repeated in the same statement).
std::string usage_insert_sql(Dialect dialect, std::size_t rows = 1);
// The usage_columns() of the newest record with request id $1.
std::string usage_find_sql(Dialect dialect);
// The UsageQuery as one SELECT. Result columns: one text column per group_by entry, then
// requests, failed, input, output, cache read, cache write and reasoning tokens, cost_micros,
// unaccounted (all integers). Errors (kBadRequest) for a filter on kDay/kHour.
Result<SqlText> usage_query_sql(Dialect dialect, const UsageQuery& query);

// Number of integer columns after the group columns in usage_query_sql's result.
inline constexpr int kUsageAggregateColumns = 9;

// Fills a UsageRow from a result row of usage_query_sql. `text(i)` returns column i as a
// std::string, `integer(i)` as std::int64_t.
template <class TextAt, class IntegerAt>
UsageRow read_usage_row(std::size_t groups, TextAt&& text, IntegerAt&& integer) {
  UsageRow row;
  row.group.reserve(groups);
  for (std::size_t i = 0; i < groups; ++i) {
    row.group.push_back(text(static_cast<int>(i)));
  }
  const int a = static_cast<int>(groups);
  row.requests = static_cast<std::uint64_t>(integer(a));
  row.failed = static_cast<std::uint64_t>(integer(a + 1));
  row.input_tokens = static_cast<std::uint64_t>(integer(a + 2));
  row.output_tokens = static_cast<std::uint64_t>(integer(a + 3));
  row.cache_read_tokens = static_cast<std::uint64_t>(integer(a + 4));
  row.cache_write_tokens = static_cast<std::uint64_t>(integer(a + 5));
  row.reasoning_tokens = static_cast<std::uint64_t>(integer(a + 6));
  row.cost_micros = integer(a + 7);
  row.unaccounted = static_cast<std::uint64_t>(integer(a + 8));
  return row;
}

}  // namespace sluice::store
