#pragma once

#include <cstdint>
#include <limits>
#include <span>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "store/migrations.h"

namespace sluice::store {

// What a store gives the migration runner: its connection, inside the one transaction every
// pending migration runs in. Each store implements it over its own connection (SqliteStore,
// PostgresStore); the runner never sees a driver. Calls come from the thread running
// run_migrations, in the order begin, (execute | query_integers | data_step)*, then commit or
// rollback.
class MigrationSession {
 public:
  virtual ~MigrationSession() = default;

  virtual Dialect dialect() const = 0;
  // Opens the transaction and takes the lock that makes a second process migrating the same
  // database at the same moment wait until this one commits or rolls back, then find the
  // migrations recorded (SQLite: BEGIN IMMEDIATE, waiting up to the busy timeout; PostgreSQL:
  // BEGIN and a transaction-scoped advisory lock, statements bounded by the migration timeout).
  // On failure no transaction is left open.
  virtual Result<void> begin() = 0;
  virtual Result<void> commit() = 0;
  // After a failure inside the transaction; best effort (the connection may be gone).
  virtual void rollback() = 0;
  // Runs one or more statements that take no parameters and return no rows.
  virtual Result<void> execute(std::string_view sql) = 0;
  // The first column of each row `sql` returns, as integers.
  virtual Result<std::vector<std::int64_t>> query_integers(std::string_view sql) = 0;
  // A migration's data step, run after its SQL in the same transaction: what SQL alone cannot
  // do (SQLite's 005 moves the ledger into segments). Most migrations have none.
  virtual Result<void> data_step(const Migration& migration) {
    (void)migration;
    return {};
  }
};

// Applies, in ascending order, the migrations of `migrations` up to version `up_to` that
// schema_migrations (created here when missing) does not record, recording each with
// `applied_at_ms`, all in one transaction: the schema moves to the newest version or stays where
// it was. A failing migration's error reads "migration NNN_name: <why>", with its kind. Blocking.
Result<void> run_migrations(MigrationSession& session, std::span<const Migration> migrations,
                            std::int64_t applied_at_ms,
                            int up_to = std::numeric_limits<int>::max());

}  // namespace sluice::store
