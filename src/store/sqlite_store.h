#pragma once

#include <memory>
#include <string>

#include "store/store.h"

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
  Result<std::vector<SpendRow>> spend_since(std::int64_t from_ms) override;
  Result<TenancyState> load_tenancy() override;
  Result<std::uint64_t> tenancy_revision() override;
  Result<std::uint64_t> commit_tenancy(const TenancyCommit& commit) override;
  Result<std::optional<IdempotentReply>> find_idempotent(std::string_view key) override;
  Result<std::vector<AuditEntry>> list_audit(const AuditQuery& query) override;

  // Runs one or more statements with no parameters and no rows (tests, maintenance).
  Result<void> execute_for_test(const std::string& sql) { return exec(sql); }

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

  Statement insert_;
  Statement spend_upsert_;
  Statement rollup_upsert_;
  Statement find_;
  Statement count_;
};

}  // namespace sluice::store
