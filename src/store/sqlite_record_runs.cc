#include "store/sqlite_record_runs.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>

#include <sqlite3.h>

#include "store/usage_segment.h"

namespace sluice::store {

Result<std::vector<std::size_t>> SqliteRecordRuns::claim(std::span<const UsageRecord> records) {
  struct Id {
    RecordSequence id;
    std::size_t index;
  };
  std::vector<Id> ids;
  ids.reserve(records.size());
  for (std::size_t i = 0; i < records.size(); ++i) {
    ids.push_back({split_record_id(records[i].record_id), i});
  }
  std::sort(ids.begin(), ids.end(), [](const Id& a, const Id& b) {
    return std::tie(a.id.prefix, a.id.sequence, a.index) <
           std::tie(b.id.prefix, b.id.sequence, b.index);
  });
  static const std::string find_sql =
      "SELECT first_sequence, last_sequence FROM usage_record_runs WHERE prefix = ? AND "
      "first_sequence <= ? ORDER BY first_sequence DESC";
  static const std::string insert_sql =
      "INSERT INTO usage_record_runs (prefix, first_sequence, last_sequence) VALUES (?, ?, ?)";
  static const std::string extend_sql =
      "UPDATE usage_record_runs SET last_sequence = ? WHERE prefix = ? AND first_sequence = ?";
  static const std::string delete_sql =
      "DELETE FROM usage_record_runs WHERE prefix = ? AND first_sequence = ?";
  sqlite3_stmt* find = nullptr;
  sqlite3_stmt* insert = nullptr;
  sqlite3_stmt* extend = nullptr;
  sqlite3_stmt* remove = nullptr;
  for (auto [slot, sql, stmt] :
       {std::tuple{&run_find_, &find_sql, &find}, std::tuple{&run_insert_, &insert_sql, &insert},
        std::tuple{&run_extend_, &extend_sql, &extend},
        std::tuple{&run_delete_, &delete_sql, &remove}}) {
    auto prepared = db_.cached(*slot, *sql);
    if (!prepared) {
      return prepared.error();
    }
    *stmt = *prepared;
  }
  auto bind_prefix = [](sqlite3_stmt* stmt, int index, std::string_view prefix) {
    sqlite3_bind_text(stmt, index, prefix.data(), static_cast<int>(prefix.size()), SQLITE_STATIC);
  };
  // The stored runs of `prefix` that start at or before `at`, nearest first, while `more`.
  using Run = std::pair<std::int64_t, std::int64_t>;
  auto runs_before = [&](std::string_view prefix, std::int64_t at,
                         auto&& more) -> Result<std::vector<Run>> {
    std::vector<Run> runs;
    sqlite3_reset(find);
    bind_prefix(find, 1, prefix);
    sqlite3_bind_int64(find, 2, at);
    int rc;
    while ((rc = sqlite3_step(find)) == SQLITE_ROW) {
      const Run run{sqlite3_column_int64(find, 0), sqlite3_column_int64(find, 1)};
      if (!more(run)) {
        break;
      }
      runs.push_back(run);
    }
    sqlite3_reset(find);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
      return db_.error("reading usage_record_runs");
    }
    return runs;
  };
  auto step = [&](sqlite3_stmt* stmt) -> Result<void> {
    const int rc = sqlite3_step(stmt);
    sqlite3_reset(stmt);
    if (rc != SQLITE_DONE) {
      return db_.error("writing usage_record_runs");
    }
    return {};
  };
  std::vector<std::size_t> fresh;
  fresh.reserve(records.size());
  for (std::size_t begin = 0; begin < ids.size();) {
    const std::string_view prefix = ids[begin].id.prefix;
    std::size_t end = begin;
    while (end < ids.size() && ids[end].id.prefix == prefix) {
      ++end;
    }
    const std::int64_t low = ids[begin].id.sequence;
    const std::int64_t high = ids[end - 1].id.sequence;
    // Runs of one prefix do not overlap, so the ones reaching into [low, high] are consecutive
    // from the nearest down.
    auto stored = runs_before(prefix, high, [&](const Run& r) { return r.second >= low; });
    if (!stored) {
      return stored.error();
    }
    std::reverse(stored->begin(), stored->end());
    std::vector<Run> added;  // runs of this batch's new sequences
    std::size_t next_stored = 0;
    for (std::size_t i = begin; i < end; ++i) {
      const std::int64_t sequence = ids[i].id.sequence;
      if (i > begin && sequence == ids[i - 1].id.sequence) {
        continue;  // the same id twice in the batch
      }
      while (next_stored < stored->size() && (*stored)[next_stored].second < sequence) {
        ++next_stored;
      }
      if (next_stored < stored->size() && (*stored)[next_stored].first <= sequence) {
        continue;  // stored already (a replay)
      }
      fresh.push_back(ids[i].index);
      if (!added.empty() && added.back().second + 1 == sequence) {
        added.back().second = sequence;
      } else {
        added.push_back({sequence, sequence});
      }
    }
    for (const Run& run : added) {
      // A run joins the stored run ending just before it and the one starting just after it.
      auto before =
          runs_before(prefix, run.first, [n = 0](const Run&) mutable { return n++ == 0; });
      if (!before) {
        return before.error();
      }
      std::int64_t last = run.second;
      auto after = runs_before(prefix, run.second + 1,
                               [&](const Run& r) { return r.first == run.second + 1; });
      if (!after) {
        return after.error();
      }
      if (!after->empty()) {
        last = after->front().second;
        sqlite3_reset(remove);
        bind_prefix(remove, 1, prefix);
        sqlite3_bind_int64(remove, 2, after->front().first);
        if (auto r = step(remove); !r) {
          return r.error();
        }
      }
      if (!before->empty() && before->front().second + 1 == run.first) {
        sqlite3_reset(extend);
        sqlite3_bind_int64(extend, 1, last);
        bind_prefix(extend, 2, prefix);
        sqlite3_bind_int64(extend, 3, before->front().first);
        if (auto r = step(extend); !r) {
          return r.error();
        }
      } else {
        sqlite3_reset(insert);
        bind_prefix(insert, 1, prefix);
        sqlite3_bind_int64(insert, 2, run.first);
        sqlite3_bind_int64(insert, 3, last);
        if (auto r = step(insert); !r) {
          return r.error();
        }
      }
    }
    begin = end;
  }
  std::sort(fresh.begin(), fresh.end());  // the batch's order
  return fresh;
}

}  // namespace sluice::store
