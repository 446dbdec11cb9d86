#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "core/result.h"

struct sqlite3;
struct sqlite3_stmt;

namespace sluice::store {

// One SQLite connection as SqliteStore and the ledger it keeps (sqlite_ledger.h) use it: WAL
// mode (readers such as `sluice usage` do not block the gateway's writer), synchronous=NORMAL
// (a committed batch survives a process crash; a power loss may lose the last batches, which
// the usage sink's spool covers) and a busy timeout, so a second process writing at the same
// moment waits instead of failing. Errors are kUnavailable for what may pass (another writer, a
// full or unreadable disk: the usage sink spools and retries), else kInternal. Blocking; one
// thread at a time.
class SqliteConnection {
 public:
  // How long a statement waits for another connection's write lock before failing.
  static constexpr int kBusyTimeoutMs = 5000;

  struct FinalizeStatement {
    void operator()(sqlite3_stmt* stmt) const;
  };
  using Statement = std::unique_ptr<sqlite3_stmt, FinalizeStatement>;

  // Opens or creates the database at `path` (":memory:" for a private in-memory one; a new file
  // is owner-only) and sets the pragmas above. Errors (kUnavailable) name the path and SQLite's
  // reason.
  static Result<std::unique_ptr<SqliteConnection>> open(const std::string& path);
  // Statements prepared from this connection must be finalized before it closes.
  ~SqliteConnection();
  SqliteConnection(const SqliteConnection&) = delete;
  SqliteConnection& operator=(const SqliteConnection&) = delete;

  // Runs one or more statements with no parameters and no rows.
  Result<void> exec(const std::string& sql);
  Result<Statement> prepare(const std::string& sql);
  // The statement for `sql` kept in `slot` (prepared on first use), reset with no bindings.
  Result<sqlite3_stmt*> cached(Statement& slot, const std::string& sql);
  // The connection's last error, as "sqlite: <doing>: <SQLite's message>".
  Error error(std::string_view doing) const;
  // Runs `body` between `begin` ("BEGIN" or "BEGIN IMMEDIATE") and COMMIT, rolling back when
  // it or the commit fails.
  template <class T, class Body>
  Result<T> in_transaction(const char* begin, Body&& body);
  std::int64_t last_insert_rowid() const;

  // Column `i` of the current row as text ("" for NULL).
  static std::string column_text(sqlite3_stmt* stmt, int i);

 private:
  explicit SqliteConnection(sqlite3* db) : db_(db) {}

  sqlite3* db_;
};

template <class T, class Body>
Result<T> SqliteConnection::in_transaction(const char* begin, Body&& body) {
  if (auto r = exec(begin); !r) {
    return r.error();
  }
  Result<T> result = body();
  if (!result) {
    (void)exec("ROLLBACK");
    return result;
  }
  if (auto r = exec("COMMIT"); !r) {
    (void)exec("ROLLBACK");
    return r.error();
  }
  return result;
}

}  // namespace sluice::store
