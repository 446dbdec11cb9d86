#pragma once

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/result.h"
#include "store/sqlite_connection.h"
#include "store/sqlite_record_runs.h"
#include "store/store.h"
#include "store/usage_record.h"
#include "store/usage_segment.h"

namespace sluice::store {

class SpendTally;
class RollupTally;

// The usage ledger as SQLite keeps it (sql/sqlite/005_segments.sql), for SqliteStore.
//
// What goes in: batches of records. A record whose record_id is stored already is skipped,
// without an index entry per record (sqlite_record_runs.h). The rest are encoded in segments, one
// per started minute of the batch (usage_segments: layout, bucket, record count, body), and
// their sums are added to usage_spend and usage_rollup in the same transaction.
// The format: usage_segment.h (varints, strings as what they do not share with the record
// before; a layout names the fields in order, so any build reads any other's segments).
// What comes out: reports and spend read the rollup, decoding only the segments at a range's
// ends (into temp.usage_edges); find, export and count read the segments.
//
// Runs on the store's connection; blocking, one thread at a time (Store's contract).
class SqliteLedger {
 public:
  explicit SqliteLedger(SqliteConnection& db) : db_(db), runs_(db) {}

  // Store::insert_usage, in one write transaction of its own.
  Result<void> insert(std::span<const UsageRecord> records);
  Result<std::vector<UsageRow>> query(const UsageQuery& query);
  Result<std::vector<SpendRow>> spend_since(std::int64_t from_ms);
  Result<std::optional<UsageRecord>> find(std::string_view request_id);
  Result<std::uint64_t> count();
  Result<void> export_range(std::int64_t from_ms, std::int64_t to_ms,
                            const std::function<bool(const UsageRecord&)>& each);

  // Migration 005's data step, inside the migration's transaction: the records of the
  // usage_records table into segments (their spend and rollup are counted already), then the
  // table goes.
  Result<void> move_from_usage_records();

 private:
  using Statement = SqliteConnection::Statement;

  // Stores the records whose ids are not stored yet as segments, inside the caller's
  // transaction; `tally` adds them to usage_spend and usage_rollup too (not when moving records
  // those already count).
  Result<void> store_records(std::span<const UsageRecord> records, bool tally);
  Result<std::int64_t> layout_id();
  // Calls each(record) for the records of the segments `stmt` selects (columns: layout, body),
  // until each returns false.
  Result<void> read_segments(sqlite3_stmt* stmt, const std::function<bool(UsageRecord&)>& each);
  // Fills temp.usage_edges with the records started in the given [from, to) ranges: what the
  // usage queries read besides the rollup.
  Result<void> fill_edges(std::initializer_list<std::pair<std::int64_t, std::int64_t>> ranges);
  // Adds a batch's spend to usage_spend (inside insert's transaction).
  Result<void> add_spend(const SpendTally& spend);
  // Adds a batch's usage to usage_rollup (inside insert's transaction).
  Result<void> add_rollup(const RollupTally& rollup);
  // Runs the cached upsert in `slot` once per entry, `bind(stmt, entry)` binding its
  // parameters; `table` names it in the error.
  template <class Entries, class Bind>
  Result<void> upsert_each(Statement& slot, const std::string& sql, const Entries& entries,
                           std::string_view table, Bind&& bind);

  SqliteConnection& db_;
  SqliteRecordRuns runs_;
  Statement segment_insert_;
  Statement layout_find_;
  Statement edge_insert_;
  Statement spend_upsert_;
  Statement rollup_upsert_;
  Statement count_;
  std::map<std::int64_t, SegmentLayout> layouts_;  // read so far, by usage_segment_layouts.id
  std::string body_;                               // a segment being written (capacity kept)
};

}  // namespace sluice::store
