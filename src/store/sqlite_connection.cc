#include "store/sqlite_connection.h"

#include <mutex>

#include <fcntl.h>
#include <fmt/format.h>
#include <sqlite3.h>
#include <unistd.h>

namespace sluice::store {
namespace {

// Failures that may pass (another writer, a full or unreadable disk) are kUnavailable, so the
// usage sink spools and retries; the rest (constraints, a schema it does not know) kInternal.
ErrorKind kind_of(int rc) {
  switch (rc & 0xff) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
    case SQLITE_IOERR:
    case SQLITE_FULL:
    case SQLITE_CANTOPEN:
    case SQLITE_READONLY:
    case SQLITE_NOMEM:
    case SQLITE_PROTOCOL:
      return ErrorKind::kUnavailable;
    default:
      return ErrorKind::kInternal;
  }
}

}  // namespace

void SqliteConnection::FinalizeStatement::operator()(sqlite3_stmt* stmt) const {
  sqlite3_finalize(stmt);
}

Result<std::unique_ptr<SqliteConnection>> SqliteConnection::open(const std::string& path) {
  // Memory statistics take a process-wide mutex around every SQLite allocation (dozens per
  // record inserted); nothing here reads them. Must precede SQLite's initialisation, hence
  // once, before the first connection; a no-op (SQLITE_MISUSE) if something initialised first.
  static std::once_flag configured;
  std::call_once(configured, [] { (void)sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0); });
  // Key names, features and spend are nobody else's business: a new database file is created
  // owner-only, and SQLite gives its -wal and -shm files the same mode.
  if (path != ":memory:" && !path.empty()) {
    const int fd = ::open(path.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0600);
    if (fd >= 0) {
      ::close(fd);
    }
  }
  sqlite3* db = nullptr;
  // NOMUTEX: one thread at a time uses a Store (store.h), so SQLite's own locking is not needed.
  const int rc = sqlite3_open_v2(
      path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nullptr);
  if (rc != SQLITE_OK) {
    Error e(ErrorKind::kUnavailable,
            fmt::format("sqlite: cannot open {}: {}", path,
                        db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(rc)));
    sqlite3_close(db);
    return e;
  }
  std::unique_ptr<SqliteConnection> connection(new SqliteConnection(db));
  sqlite3_busy_timeout(db, kBusyTimeoutMs);
  sqlite3_extended_result_codes(db, 1);
  // WAL: `sluice usage` reads while the gateway writes. NORMAL is durable against process
  // crashes in WAL mode (https://www.sqlite.org/pragma.html#pragma_synchronous).
  // The usage ledger's indexes on random ids (record_id, request_id) touch pages all over the
  // file on every insert: with SQLite's default 2 MiB cache each batch re-read most of them
  // with pread. A 64 MiB cache and reads through a memory map keep the writer's cost per record
  // flat as the ledger grows (the page cache is per connection; one writer, one reader each).
  // Checkpoints every 16384 pages (64 MiB of WAL) instead of 1000: a hot index page changed by
  // many batches is copied into the database once per checkpoint, not once per few batches.
  if (auto r = connection->exec("PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; "
                                "PRAGMA cache_size=-65536; PRAGMA mmap_size=1073741824; "
                                "PRAGMA temp_store=MEMORY; PRAGMA wal_autocheckpoint=16384;");
      !r) {
    return Error(r.error().kind(), fmt::format("{} (database {})", r.error().message(), path));
  }
  return connection;
}

SqliteConnection::~SqliteConnection() {
  // close_v2: a statement still outstanding makes the connection wait for it instead of
  // leaking (sqlite3_close would refuse with SQLITE_BUSY).
  sqlite3_close_v2(db_);
}

Error SqliteConnection::error(std::string_view doing) const {
  return Error(kind_of(sqlite3_extended_errcode(db_)),
               fmt::format("sqlite: {}: {}", doing, sqlite3_errmsg(db_)));
}

Result<void> SqliteConnection::exec(const std::string& sql) {
  char* message = nullptr;
  const int rc = sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &message);
  if (rc != SQLITE_OK) {
    Error e(kind_of(rc),
            fmt::format("sqlite: {}", message != nullptr ? message : sqlite3_errstr(rc)));
    sqlite3_free(message);
    return e;
  }
  return {};
}

Result<SqliteConnection::Statement> SqliteConnection::prepare(const std::string& sql) {
  sqlite3_stmt* stmt = nullptr;
  if (sqlite3_prepare_v3(db_, sql.c_str(), static_cast<int>(sql.size()), SQLITE_PREPARE_PERSISTENT,
                         &stmt, nullptr) != SQLITE_OK) {
    return error("preparing a statement (has the store been migrated?)");
  }
  return Statement(stmt);
}

Result<sqlite3_stmt*> SqliteConnection::cached(Statement& slot, const std::string& sql) {
  if (!slot) {
    auto s = prepare(sql);
    if (!s) {
      return s.error();
    }
    slot = std::move(*s);
  }
  sqlite3_reset(slot.get());
  sqlite3_clear_bindings(slot.get());
  return slot.get();
}

std::int64_t SqliteConnection::last_insert_rowid() const { return sqlite3_last_insert_rowid(db_); }

std::string SqliteConnection::column_text(sqlite3_stmt* stmt, int i) {
  const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(stmt, i));
  return text == nullptr ? std::string() : std::string(text, sqlite3_column_bytes(stmt, i));
}

}  // namespace sluice::store
