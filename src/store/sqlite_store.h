#pragma once

#include <memory>
#include <span>
#include <string>

#include "store/migrations.h"
#include "store/sqlite_connection.h"
#include "store/sqlite_ledger.h"
#include "store/store.h"

namespace sluice::store {

// The embedded store: one SQLite database file (sqlite_connection.h: WAL, synchronous=NORMAL,
// a busy timeout; statements prepared once and reused). The usage ledger is SqliteLedger
// (segments); the tenancy tables go through tenancy_sql.h. Blocking; one thread at a time
// (Store's contract).
class SqliteStore final : public Store {
 public:
  // How long a statement waits for another connection's write lock before failing.
  static constexpr int kBusyTimeoutMs = SqliteConnection::kBusyTimeoutMs;

  // Opens or creates the database at `path` (":memory:" for a private in-memory one) and sets
  // the pragmas above. Does not migrate. Errors (kUnavailable) name the path and SQLite's
  // reason.
  static Result<std::unique_ptr<SqliteStore>> open(const std::string& path);

  std::string_view kind() const override { return "sqlite"; }
  // The migrations of sql/sqlite through store/migration_runner.h; BEGIN IMMEDIATE, so two
  // processes starting together apply each migration once (the second waits, then finds it
  // recorded).
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
  Result<void> execute_for_test(const std::string& sql) { return db_->exec(sql); }
  // Applies the migrations up to `version` only (tests of a migration's data step).
  Result<void> migrate_to_for_test(int version);
  // Applies `list` instead of sql/sqlite's migrations (tests of the runner on this dialect).
  Result<void> migrate_with_for_test(std::span<const Migration> list);

 private:
  explicit SqliteStore(std::unique_ptr<SqliteConnection> db) : db_(std::move(db)), ledger_(*db_) {}

  class MigrationAccess;
  class TenancyAccess;

  Result<void> migrate(std::span<const Migration> list, int up_to);

  // Declared first: the ledger's statements are finalized before the connection closes.
  std::unique_ptr<SqliteConnection> db_;
  SqliteLedger ledger_;
};

}  // namespace sluice::store
