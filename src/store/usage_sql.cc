#include "store/usage_sql.h"

#include <algorithm>
#include <climits>

#include <fmt/format.h>

#include "store/usage_fields.h"

namespace sluice::store {
namespace {

std::string placeholder(Dialect dialect, std::size_t n) {
  return dialect == Dialect::kSqlite ? std::string("?") : fmt::format("${}", n);
}

// Parameter n by number in both dialects (SQLite's bare ? are positional, so a parameter used
// twice needs ?N).
std::string numbered(Dialect dialect, std::size_t n) {
  return fmt::format("{}{}", dialect == Dialect::kSqlite ? '?' : '$', n);
}

std::string column_list() {
  std::string out;
  for (std::string_view name : usage_columns()) {
    if (!out.empty()) {
      out += ", ";
    }
    out += name;
  }
  return out;
}

// The column a filterable dimension lives in; empty for the time buckets.
std::string_view dimension_column(Dimension d) {
  switch (d) {
    case Dimension::kKey:
      return "key_name";
    case Dimension::kKeyGroup:
      return "key_group";
    case Dimension::kTenant:
      return "tenant";
    case Dimension::kFeature:
      return "feature";
    case Dimension::kAlias:
      return "alias";
    case Dimension::kProvider:
      return "provider";
    case Dimension::kModel:
      return "model";
    case Dimension::kOutcome:
      return "outcome";
    case Dimension::kDay:
    case Dimension::kHour:
      return {};
  }
  return {};
}

// UTC calendar buckets of started_at_ms. PostgreSQL: a timestamp without time zone counted
// from the epoch, so the session's TimeZone setting cannot shift the bucket.
std::string group_expression(Dialect dialect, Dimension d) {
  const bool day = d == Dimension::kDay;
  if (d == Dimension::kDay || d == Dimension::kHour) {
    if (dialect == Dialect::kSqlite) {
      return fmt::format("strftime('{}', started_at_ms / 1000, 'unixepoch')",
                         day ? "%Y-%m-%d" : "%Y-%m-%dT%H");
    }
    return fmt::format(
        "to_char(TIMESTAMP '1970-01-01 00:00:00' + started_at_ms * INTERVAL '1 millisecond', "
        "'{}') COLLATE \"C\"",
        day ? "YYYY-MM-DD" : "YYYY-MM-DD\"T\"HH24");
  }
  // Byte order for ties, as SQLite's BINARY collation, whatever the database's locale.
  if (dialect == Dialect::kPostgres) {
    return fmt::format("{} COLLATE \"C\"", dimension_column(d));
  }
  return std::string(dimension_column(d));
}

// "(p1, ..., pN), (pN+1, ...)": `rows` tuples of `columns` placeholders numbered from 1.
std::string value_tuples(Dialect dialect, std::size_t rows, std::size_t columns) {
  std::string values;
  for (std::size_t row = 0; row < rows; ++row) {
    values += row > 0 ? ", (" : "(";
    for (std::size_t i = 1; i <= columns; ++i) {
      values += (i > 1 ? ", " : "") + placeholder(dialect, row * columns + i);
    }
    values += ')';
  }
  return values;
}

}  // namespace

std::string usage_find_sql(Dialect dialect) {
  return fmt::format(
      "SELECT {} FROM usage_records WHERE request_id = {} ORDER BY started_at_ms DESC, id DESC "
      "LIMIT 1",
      column_list(), placeholder(dialect, 1));
}

UsageSplit usage_query_split(const UsageQuery& query) {
  const std::int64_t from = query.from_ms;
  const std::int64_t to = query.to_ms;
  std::int64_t first = rollup_bucket(std::max<std::int64_t>(from, 0));
  if (first < from) {
    first = from > INT64_MAX - kRollupBucketMs ? to : first + kRollupBucketMs;
  }
  std::int64_t last = rollup_bucket(std::max<std::int64_t>(to, 0));
  if (first >= last || from >= to) {
    first = from;
    last = from;
  }
  return {from, first, last, to};
}

std::string usage_export_sql(Dialect dialect) {
  return fmt::format(
      "SELECT {}, id FROM usage_records WHERE started_at_ms >= {} AND started_at_ms < {} AND "
      "(started_at_ms > {} OR (started_at_ms = {} AND id > {})) ORDER BY started_at_ms, id "
      "LIMIT {}",
      column_list(), numbered(dialect, 1), numbered(dialect, 2), numbered(dialect, 3),
      numbered(dialect, 3), numbered(dialect, 4), numbered(dialect, 5));
}

Result<SqlText> usage_query_sql(Dialect dialect, const UsageQuery& query, std::string_view ledger) {
  SqlText out;
  auto param = [&](SqlParam p) {
    out.params.push_back(std::move(p));
    return placeholder(dialect, out.params.size());
  };
  std::string select;
  std::string positions;
  for (std::size_t i = 0; i < query.group_by.size(); ++i) {
    select += group_expression(dialect, query.group_by[i]) + ", ";
    positions += fmt::format("{}{}", i == 0 ? "" : ", ", i + 1);
  }
  select +=
      "CAST(COALESCE(SUM(requests), 0) AS BIGINT), "
      "CAST(COALESCE(SUM(failed), 0) AS BIGINT), "
      "CAST(COALESCE(SUM(input_tokens), 0) AS BIGINT), "
      "CAST(COALESCE(SUM(output_tokens), 0) AS BIGINT), "
      "CAST(COALESCE(SUM(cache_read_tokens), 0) AS BIGINT), "
      "CAST(COALESCE(SUM(cache_write_tokens), 0) AS BIGINT), "
      "CAST(COALESCE(SUM(reasoning_tokens), 0) AS BIGINT), "
      "CAST(COALESCE(SUM(cost_micros), 0) AS BIGINT), "
      "CAST(COALESCE(SUM(unaccounted), 0) AS BIGINT), "
      "CAST(COALESCE(SUM(saved_input_tokens), 0) AS BIGINT), "
      "CAST(COALESCE(SUM(saved_output_tokens), 0) AS BIGINT), "
      "CAST(COALESCE(SUM(saved_cost_micros), 0) AS BIGINT)";
  std::string filters;
  for (const auto& [dimension, value] : query.where) {
    if (dimension_column(dimension).empty()) {
      return Error(ErrorKind::kBadRequest,
                   fmt::format("cannot filter on {}: use the time range", to_string(dimension)));
    }
  }
  auto add_filters = [&](std::string& where) {
    for (const auto& [dimension, value] : query.where) {
      where += fmt::format(" AND {} = {}", dimension_column(dimension), param(value));
    }
  };
  const auto [from, first, last, to] = usage_query_split(query);
  // One placeholder per value, in the order they appear (SQLite's ? are positional).
  std::string rollup_where = "bucket_ms >= " + param(first);
  rollup_where += " AND bucket_ms < " + param(last);
  add_filters(rollup_where);
  std::string ledger_where = "((started_at_ms >= " + param(from);
  ledger_where += " AND started_at_ms < " + param(first);
  ledger_where += ") OR (started_at_ms >= " + param(last);
  ledger_where += " AND started_at_ms < " + param(to) + "))";
  add_filters(ledger_where);
  // Unaccounted records have no known cost: they are counted, never summed as zero spend.
  out.sql = fmt::format(
      "SELECT {} FROM ("
      "SELECT bucket_ms AS started_at_ms, key_name, key_group, tenant, feature, alias, provider, "
      "model, outcome, requests, failed, input_tokens, output_tokens, cache_read_tokens, "
      "cache_write_tokens, reasoning_tokens, cost_micros, unaccounted, saved_input_tokens, "
      "saved_output_tokens, saved_cost_micros FROM usage_rollup WHERE {} "
      "UNION ALL "
      "SELECT started_at_ms, key_name, key_group, tenant, feature, alias, provider, model, "
      "outcome, 1, CASE WHEN outcome IN ('upstream_error', 'midstream_error') THEN 1 ELSE 0 END, "
      "input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, reasoning_tokens, "
      "CASE WHEN priced THEN cost_micros ELSE 0 END, CASE WHEN priced THEN 0 ELSE 1 END, "
      "saved_input_tokens, saved_output_tokens, saved_cost_micros "
      "FROM {} WHERE {}) AS u",
      select, rollup_where, ledger, ledger_where);
  const std::size_t cost = query.group_by.size() + 8;
  const std::size_t requests = query.group_by.size() + 1;
  if (!query.group_by.empty()) {
    out.sql += fmt::format(" GROUP BY {}", positions);
  }
  out.sql += fmt::format(" ORDER BY {} DESC, {} DESC{}{} LIMIT {}", cost, requests,
                         positions.empty() ? "" : ", ", positions,
                         param(static_cast<std::int64_t>(query.limit)));
  return out;
}

void RollupTally::add(const UsageRecord& r) {
  const std::int64_t bucket = rollup_bucket(r.started_at_ms);
  const bool same = last_ != sums_.end() && [&] {
    const auto& [b, key, group, tenant, feature, alias, provider, model, outcome] = last_->first;
    return b == bucket && key == r.key_name && group == r.key_group && tenant == r.tenant &&
           feature == r.feature && alias == r.alias && provider == r.provider && model == r.model &&
           outcome == r.outcome;
  }();
  if (!same) {
    last_ = sums_
                .try_emplace(Key{bucket, r.key_name, r.key_group, r.tenant, r.feature, r.alias,
                                 r.provider, r.model, r.outcome})
                .first;
  }
  Sums& sum = last_->second;
  const bool failed = r.outcome == "upstream_error" || r.outcome == "midstream_error";
  const std::int64_t add[] = {1,
                              failed ? 1 : 0,
                              static_cast<std::int64_t>(r.input_tokens),
                              static_cast<std::int64_t>(r.output_tokens),
                              static_cast<std::int64_t>(r.cache_read_tokens),
                              static_cast<std::int64_t>(r.cache_write_tokens),
                              static_cast<std::int64_t>(r.reasoning_tokens),
                              r.priced ? r.cost_micros : 0,
                              r.priced ? 0 : 1,
                              static_cast<std::int64_t>(r.saved_input_tokens),
                              static_cast<std::int64_t>(r.saved_output_tokens),
                              r.saved_cost_micros};
  for (std::size_t i = 0; i < sum.size(); ++i) {
    sum[i] += add[i];
  }
}

std::string rollup_upsert_sql(Dialect dialect, std::size_t rows) {
  static constexpr const char* kSums[] = {"requests",
                                          "failed",
                                          "input_tokens",
                                          "output_tokens",
                                          "cache_read_tokens",
                                          "cache_write_tokens",
                                          "reasoning_tokens",
                                          "cost_micros",
                                          "unaccounted",
                                          "saved_input_tokens",
                                          "saved_output_tokens",
                                          "saved_cost_micros"};
  std::string sums;
  std::string updates;
  for (const char* column : kSums) {
    sums += fmt::format(", {}", column);
    updates += fmt::format("{}{} = usage_rollup.{} + excluded.{}", updates.empty() ? "" : ", ",
                           column, column, column);
  }
  return fmt::format(
      "INSERT INTO usage_rollup (bucket_ms, key_name, key_group, tenant, feature, alias, "
      "provider, model, outcome{}) VALUES {} ON CONFLICT (bucket_ms, key_name, key_group, "
      "tenant, feature, alias, provider, model, outcome) DO UPDATE SET {}",
      sums, value_tuples(dialect, rows, kRollupUpsertColumns), updates);
}

void SpendTally::add(std::int64_t started_at_ms, const std::string& key_group,
                     const std::string& key_id, bool priced, std::int64_t cost_micros) {
  // Truncating division, as the SQL's started_at_ms / 900000 * 900000.
  const std::int64_t bucket = started_at_ms / kSpendBucketMs * kSpendBucketMs;
  if (last_ == sums_.end() || std::get<0>(last_->first) != bucket ||
      std::get<1>(last_->first) != key_group || std::get<2>(last_->first) != key_id) {
    last_ = sums_.try_emplace(Key{bucket, key_group, key_id}).first;
  }
  Sum& sum = last_->second;
  add_spend(sum.cost_micros, priced ? cost_micros : 0);
  ++sum.records;
}

std::string spend_upsert_sql(Dialect dialect, std::size_t rows) {
  return fmt::format(
      "INSERT INTO usage_spend (bucket_ms, key_group, key_id, cost_micros, records) "
      "VALUES {} ON CONFLICT (bucket_ms, key_group, key_id) DO UPDATE SET "
      "cost_micros = usage_spend.cost_micros + excluded.cost_micros, "
      "records = usage_spend.records + excluded.records",
      value_tuples(dialect, rows, kSpendUpsertColumns));
}

std::int64_t spend_boundary(std::int64_t from_ms) {
  // The first bucket boundary at or after from_ms (from_ms itself when it is one).
  std::int64_t boundary = from_ms / kSpendBucketMs * kSpendBucketMs;
  if (boundary < from_ms) {
    boundary += kSpendBucketMs;
  }
  return boundary;
}

SqlText spend_since_sql(Dialect dialect, std::int64_t from_ms, std::string_view ledger) {
  const std::int64_t boundary = spend_boundary(from_ms);
  SqlText out;
  out.sql = fmt::format(
      "SELECT key_group, key_id, CAST(SUM(cost) AS BIGINT) FROM ("
      "SELECT key_group, key_id, cost_micros AS cost FROM usage_spend WHERE bucket_ms >= {} "
      "UNION ALL "
      "SELECT key_group, key_id, CASE WHEN priced THEN cost_micros ELSE 0 END FROM "
      "{} WHERE started_at_ms >= {} AND started_at_ms < {}"
      ") AS spend GROUP BY key_group, key_id",
      placeholder(dialect, 1), ledger, placeholder(dialect, 2), placeholder(dialect, 3));
  out.params = {boundary, from_ms, boundary};
  return out;
}

}  // namespace sluice::store
