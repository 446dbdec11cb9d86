#pragma once

#include <map>
#include <memory>
#include <string>

#include "store/store.h"
#include "store/usage_segment.h"

struct sqlite3;
struct sqlite3_stmt;

namespace sluice::store {

class SpendTally;
class RollupTally;

// The embedded store: one SQLite database file in WAL mode (readers such as `sluice usage` do
// not block the gateway's writer), synchronous=NORMAL (a committed batch survives a process
// crash; a power loss may lose the last batches, which the usage sink's spool covers) and a
// busy timeout so a second process writing at the same moment waits instead of failing.
// Statements are prepared once and reused. Blocking; one thread at a time (Store's contract).
// The usage ledger is kept in segments (store/usage_segment.h, sql/sqlite/005_segments.sql).
class SqliteStore final : public Store {
 public:
  // How long a statement waits for another connection's write lock before failing.
  static constexpr int kBusyTimeoutMs = 5000;

  // Opens or creates the database at `path` (":memory:" for a private in-memory one) and sets
  // the pragmas above. Does not migrate. Errors (kUnavailable) name the path and SQLite's
  // reason.
  static Result<std::unique_ptr<SqliteStore>> open(const std::string& path);
  ~SqliteStore() override;

  std::string_view kind() const override { return "sqlite"; }
  Result<void> migrate() override;
  Result<void> ping() override;
  Result<void> insert_usage(std::span<const UsageRecord> records) override;
  Result<std::vector<UsageRow>> query_usage(const UsageQuery& query) override;
  Result<std::optional<UsageRecord>> find_usage(std::string_view request_id) override;
  Result<std::uint64_t> count_usage() override;
  Result<void> export_usage(std::int64_t from_ms, std::int64_t to_ms,
                            const std::function<bool(const UsageRecord&)>& each) override;
  Result<std::vector<SpendRow>> spend_since(std::int64_t from_ms) override;
  Result<TenancyState> load_tenancy() override;
  Result<std::uint64_t> tenancy_revision() override;
  Result<std::uint64_t> commit_tenancy(const TenancyCommit& commit) override;
  Result<std::optional<IdempotentReply>> find_idempotent(std::string_view key,
                                                         std::int64_t now_ms) override;
  Result<void> purge_idempotent(std::int64_t now_ms) override;
  Result<std::vector<AuditEntry>> list_audit(const AuditQuery& query) override;

  // Runs one or more statements with no parameters and no rows (tests, maintenance).
  Result<void> execute_for_test(const std::string& sql) { return exec(sql); }
  // Applies the migrations up to `version` only (tests of a migration's data step).
  Result<void> migrate_to_for_test(int version) { return migrate_up_to(version); }

 private:
  explicit SqliteStore(sqlite3* db) : db_(db) {}

  struct FinalizeStatement {
    void operator()(sqlite3_stmt* stmt) const;
  };
  using Statement = std::unique_ptr<sqlite3_stmt, FinalizeStatement>;

  Result<void> exec(const std::string& sql);
  Result<Statement> prepare(const std::string& sql);
  // The cached statement for `sql` in `slot`, prepared on first use.
  Result<sqlite3_stmt*> cached(Statement& slot, const std::string& sql);
  Error error(std::string_view doing) const;
  // Runs `body` between `begin` ("BEGIN" or "BEGIN IMMEDIATE") and COMMIT, rolling back when
  // it fails.
  template <class T, class Body>
  Result<T> in_transaction(const char* begin, Body&& body);

  class TenancyAccess;

  Result<void> migrate_up_to(int version);
  // Migration 005's data step: the records of usage_records into segments, then the table goes.
  Result<void> move_ledger_to_segments();
  // Stores the records whose ids are not stored yet as segments, inside the caller's
  // transaction; `tally` adds them to usage_spend and usage_rollup too (not when moving records
  // those already count).
  Result<void> store_records(std::span<const UsageRecord> records, bool tally);
  // Indexes into `records` of the ones to store: the first of each id, none already stored.
  // Records the new ids in usage_record_runs.
  Result<std::vector<std::size_t>> claim_record_ids(std::span<const UsageRecord> records);
  Result<std::int64_t> layout_id();
  // Calls each(record) for the records of the segments `stmt` selects (columns: layout, body),
  // until each returns false.
  Result<void> read_segments(sqlite3_stmt* stmt, const std::function<bool(UsageRecord&)>& each);
  // Fills temp.usage_edges with the records started in the given [from, to) ranges: what the
  // usage queries read besides the rollup.
  Result<void> fill_edges(std::initializer_list<std::pair<std::int64_t, std::int64_t>> ranges);

  sqlite3* db_;
  // Adds a batch's spend to usage_spend (inside insert_usage's transaction).
  Result<void> add_spend(const SpendTally& spend);
  // Adds a batch's usage to usage_rollup (inside insert_usage's transaction).
  Result<void> add_rollup(const RollupTally& rollup);
  // Runs the cached upsert in `slot` once per entry, `bind(stmt, entry)` binding its
  // parameters; `table` names it in the error.
  template <class Entries, class Bind>
  Result<void> upsert_each(Statement& slot, const std::string& sql, const Entries& entries,
                           std::string_view table, Bind&& bind);

  Statement segment_insert_;
  Statement layout_find_;
  Statement run_find_;
  Statement run_insert_;
  Statement run_extend_;
  Statement run_delete_;
  Statement edge_insert_;
  Statement spend_upsert_;
  Statement rollup_upsert_;
  Statement count_;
  std::map<std::int64_t, SegmentLayout> layouts_;  // read so far, by usage_segment_layouts.id
  std::string body_;                               // a segment being written (capacity kept)
};

}  // namespace sluice::store
