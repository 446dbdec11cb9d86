#pragma once

#include <array>
#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <string_view>
#include <tuple>
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

// The usage_columns() of the newest record with request id $1.
std::string usage_find_sql(Dialect dialect);
// The UsageQuery as one SELECT. Result columns: one text column per group_by entry, then
// requests, failed, input, output, cache read, cache write and reasoning tokens, cost_micros,
// unaccounted (all integers). Errors (kBadRequest) for a filter on kDay/kHour. The whole
// minutes of the range are read from usage_rollup, the records of the partial minutes at its
// ends from the ledger (on its started_at_ms index): the same rows as summing the ledger.
// `ledger` is the table (or parenthesised SELECT ... AS name) the partial minutes are read from,
// with the columns the query reads: started_at_ms, the dimensions, the token counts, priced and
// cost_micros (SqliteStore: temp.usage_edges, filled from its segments).
Result<SqlText> usage_query_sql(Dialect dialect, const UsageQuery& query,
                                std::string_view ledger = "usage_records");

// The parts of a UsageQuery's range: [first, last) its whole minutes (usage_rollup); [from,
// first) and [last, to) the partial minutes at its ends (the ledger). When the range holds no
// whole minute, first == last == from: all of it is read from the ledger.
struct UsageSplit {
  std::int64_t from, first, last, to;
};
UsageSplit usage_query_split(const UsageQuery& query);

// Records started in [$1, $2) after ($3 started_at_ms, $4 id), at most $5, ordered by
// started_at_ms and id: the usage_columns() then id (pages of an export).
std::string usage_export_sql(Dialect dialect);

// Spend per key per quarter hour (usage_spend: sql/*/003_spend.sql, by key id since
// sqlite/006 and postgres/005), kept next to the ledger by insert_usage so budgets never scan
// the ledger.
inline constexpr std::int64_t kSpendBucketMs = 900'000;

// sum += micros, saturating rather than wrapping: a sum beyond int64 stays above every budget.
inline void add_spend(std::int64_t& sum, std::int64_t micros) {
  if (__builtin_add_overflow(sum, micros, &sum)) {
    sum = micros > 0 ? std::numeric_limits<std::int64_t>::max()
                     : std::numeric_limits<std::int64_t>::min();
  }
}

// What one insert_usage batch added, per (bucket, key group, key id): the records actually
// inserted (a replayed record_id adds nothing), priced ones with their cost.
class SpendTally {
 public:
  void add(std::int64_t started_at_ms, const std::string& key_group, const std::string& key_id,
           bool priced, std::int64_t cost_micros);
  bool empty() const { return sums_.empty(); }

  struct Sum {
    std::int64_t cost_micros = 0;
    std::int64_t records = 0;
  };
  using Key = std::tuple<std::int64_t, std::string, std::string>;  // bucket_ms, group, key id
  const std::map<Key, Sum>& sums() const { return sums_; }

 private:
  std::map<Key, Sum> sums_;
  std::map<Key, Sum>::iterator last_ = sums_.end();  // as RollupTally's
};

// Adds `rows` SpendTally entries, each as $1 bucket_ms, $2 key_group, $3 key_id, $4 cost,
// $5 records, the next entry's from $6. Entries of one statement must differ in their key
// (PostgreSQL refuses to update a row twice in one statement): a tally's do.
inline constexpr std::size_t kSpendUpsertColumns = 5;
std::string spend_upsert_sql(Dialect dialect, std::size_t rows = 1);
// Spend per key group and key id of the records started at or after `from_ms`. Result
// columns: key_group, key_id, cost_micros. Whole buckets come from usage_spend; when `from_ms` is
// not on a bucket boundary, the ledger's records before the next boundary are added (a short range
// on its started_at_ms index), read from `ledger` as in usage_query_sql.
SqlText spend_since_sql(Dialect dialect, std::int64_t from_ms,
                        std::string_view ledger = "usage_records");
// The first usage_spend bucket boundary at or after from_ms: spend_since_sql reads [from_ms,
// boundary) from the ledger.
std::int64_t spend_boundary(std::int64_t from_ms);

// Usage per minute and dimension tuple (usage_rollup, sql/*/004_rollup.sql), kept next to the
// ledger by insert_usage: usage_query_sql reads it for a range's whole minutes.
inline constexpr std::int64_t kRollupBucketMs = 60'000;
// The minute a record counts in: started_at_ms floored (also below zero), as the migration's SQL.
inline std::int64_t rollup_bucket(std::int64_t started_at_ms) {
  const std::int64_t r = started_at_ms % kRollupBucketMs;
  return started_at_ms - (r < 0 ? r + kRollupBucketMs : r);
}

// What one insert_usage batch added to usage_rollup: the records actually inserted.
class RollupTally {
 public:
  void add(const UsageRecord& record);
  bool empty() const { return sums_.empty(); }

  // bucket_ms, key_name, key_group, tenant, feature, alias, provider, model, outcome
  using Key = std::tuple<std::int64_t, std::string, std::string, std::string, std::string,
                         std::string, std::string, std::string, std::string>;
  // requests, failed, input, output, cache read, cache write, reasoning, cost_micros,
  // unaccounted: usage_rollup's columns in order.
  using Sums = std::array<std::int64_t, 12>;
  const std::map<Key, Sums>& sums() const { return sums_; }

 private:
  std::map<Key, Sums> sums_;
  // The entry the record before went to: records of a batch mostly share their tuple, and
  // comparing it is cheaper than building a Key and searching the map.
  std::map<Key, Sums>::iterator last_ = sums_.end();
};

// Adds `rows` RollupTally entries, each as $1..$9 the key's columns and $10..$18 the sums in
// the orders above, the next entry's from $19; distinct keys, as spend_upsert_sql's.
inline constexpr std::size_t kRollupUpsertColumns = 21;
std::string rollup_upsert_sql(Dialect dialect, std::size_t rows = 1);

// Number of integer columns after the group columns in usage_query_sql's result.
inline constexpr int kUsageAggregateColumns = 12;

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
  row.saved_input_tokens = static_cast<std::uint64_t>(integer(a + 9));
  row.saved_output_tokens = static_cast<std::uint64_t>(integer(a + 10));
  row.saved_cost_micros = integer(a + 11);
  return row;
}

}  // namespace sluice::store
