#include "store/sqlite_store.h"

#include <chrono>
#include <limits>
#include <mutex>
#include <tuple>

#include <fcntl.h>
#include <fmt/format.h>
#include <sqlite3.h>
#include <unistd.h>

#include "store/migrations.h"
#include "store/tenancy_sql.h"
#include "store/usage_fields.h"
#include "store/usage_sql.h"

namespace sluice::store {
namespace {

std::int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

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

// Binds a UsageRecord's fields to the insert statement, column by column.
struct Binder {
  sqlite3_stmt* stmt;
  int index = 0;
  int rc = SQLITE_OK;
  std::string failed_field;

  void check(std::string_view name, int result) {
    if (result != SQLITE_OK && rc == SQLITE_OK) {
      rc = result;
      failed_field = name;
    }
  }
  void operator()(std::string_view name, const std::string& v) {
    check(name,
          sqlite3_bind_text(stmt, ++index, v.data(), static_cast<int>(v.size()), SQLITE_STATIC));
  }
  void operator()(std::string_view name, const std::int64_t& v) {
    check(name, sqlite3_bind_int64(stmt, ++index, v));
  }
  void operator()(std::string_view name, const std::uint64_t& v) {
    if (v > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
      check(name, SQLITE_RANGE);
      ++index;
      return;
    }
    check(name, sqlite3_bind_int64(stmt, ++index, static_cast<std::int64_t>(v)));
  }
  void operator()(std::string_view name, const int& v) {
    check(name, sqlite3_bind_int(stmt, ++index, v));
  }
  void operator()(std::string_view name, const bool& v) {
    check(name, sqlite3_bind_int(stmt, ++index, v ? 1 : 0));
  }
  void operator()(std::string_view name, const std::vector<AttemptRecord>& v) {
    const std::string json = encode_attempts(v);
    check(name, sqlite3_bind_text(stmt, ++index, json.data(), static_cast<int>(json.size()),
                                  SQLITE_TRANSIENT));
  }
};

std::string column_text(sqlite3_stmt* stmt, int i) {
  const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(stmt, i));
  return text == nullptr ? std::string() : std::string(text, sqlite3_column_bytes(stmt, i));
}

// Reads a usage_records row (usage_columns() order) into a UsageRecord.
struct Reader {
  sqlite3_stmt* stmt;
  int index = 0;
  std::optional<Error> error;

  void operator()(std::string_view, std::string& v) { v = column_text(stmt, index++); }
  void operator()(std::string_view, std::int64_t& v) { v = sqlite3_column_int64(stmt, index++); }
  void operator()(std::string_view, std::uint64_t& v) {
    v = static_cast<std::uint64_t>(sqlite3_column_int64(stmt, index++));
  }
  void operator()(std::string_view, int& v) { v = sqlite3_column_int(stmt, index++); }
  void operator()(std::string_view, bool& v) { v = sqlite3_column_int(stmt, index++) != 0; }
  void operator()(std::string_view, std::vector<AttemptRecord>& v) {
    auto decoded = decode_attempts(column_text(stmt, index++));
    if (decoded) {
      v = std::move(*decoded);
    } else if (!error) {
      error = decoded.error();
    }
  }
};

}  // namespace

void SqliteStore::FinalizeStatement::operator()(sqlite3_stmt* stmt) const {
  sqlite3_finalize(stmt);
}

Result<std::unique_ptr<SqliteStore>> SqliteStore::open(const std::string& path) {
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
  std::unique_ptr<SqliteStore> store(new SqliteStore(db));
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
  if (auto r = store->exec("PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; "
                           "PRAGMA cache_size=-65536; PRAGMA mmap_size=1073741824; "
                           "PRAGMA temp_store=MEMORY; PRAGMA wal_autocheckpoint=16384;");
      !r) {
    return Error(r.error().kind(), fmt::format("{} (database {})", r.error().message(), path));
  }
  return store;
}

SqliteStore::~SqliteStore() {
  // Every cached statement is finalized before the connection closes: sqlite3_close refuses
  // (SQLITE_BUSY) while one is outstanding and the connection would leak. close_v2 would wait
  // for a forgotten statement instead of failing, so a new slot left out here cannot leak it.
  insert_.reset();
  spend_upsert_.reset();
  rollup_upsert_.reset();
  find_.reset();
  count_.reset();
  sqlite3_close_v2(db_);
}

Error SqliteStore::error(std::string_view doing) const {
  return Error(kind_of(sqlite3_extended_errcode(db_)),
               fmt::format("sqlite: {}: {}", doing, sqlite3_errmsg(db_)));
}

Result<void> SqliteStore::exec(const std::string& sql) {
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

Result<SqliteStore::Statement> SqliteStore::prepare(const std::string& sql) {
  sqlite3_stmt* stmt = nullptr;
  if (sqlite3_prepare_v3(db_, sql.c_str(), static_cast<int>(sql.size()), SQLITE_PREPARE_PERSISTENT,
                         &stmt, nullptr) != SQLITE_OK) {
    return error("preparing a statement (has the store been migrated?)");
  }
  return Statement(stmt);
}

Result<sqlite3_stmt*> SqliteStore::cached(Statement& slot, const std::string& sql) {
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

Result<void> SqliteStore::migrate() {
  // BEGIN IMMEDIATE takes the write lock first, so two processes starting together apply each
  // migration once: the second waits (busy timeout), then finds it recorded.
  if (auto r = exec("CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, "
                    "name TEXT NOT NULL, applied_at_ms INTEGER NOT NULL) STRICT;"
                    "BEGIN IMMEDIATE;");
      !r) {
    return r;
  }
  auto run = [&]() -> Result<void> {
    auto applied = prepare("SELECT 1 FROM schema_migrations WHERE version = ?");
    auto record = prepare(
        "INSERT INTO schema_migrations (version, name, applied_at_ms) "
        "VALUES (?, ?, ?)");
    if (!applied || !record) {
      return !applied ? applied.error() : record.error();
    }
    for (const Migration& m : migrations(Dialect::kSqlite)) {
      sqlite3_reset(applied->get());
      sqlite3_bind_int(applied->get(), 1, m.version);
      const int rc = sqlite3_step(applied->get());
      if (rc == SQLITE_ROW) {
        continue;
      }
      if (rc != SQLITE_DONE) {
        return error("reading schema_migrations");
      }
      if (auto r = exec(std::string(m.sql)); !r) {
        return Error(r.error().kind(),
                     fmt::format("migration {:03}_{}: {}", m.version, m.name, r.error().message()));
      }
      sqlite3_reset(record->get());
      sqlite3_bind_int(record->get(), 1, m.version);
      sqlite3_bind_text(record->get(), 2, m.name.data(), static_cast<int>(m.name.size()),
                        SQLITE_STATIC);
      sqlite3_bind_int64(record->get(), 3, now_ms());
      if (sqlite3_step(record->get()) != SQLITE_DONE) {
        return error("recording a migration");
      }
    }
    return {};
  };
  if (auto r = run(); !r) {
    (void)exec("ROLLBACK");
    return r;
  }
  return exec("COMMIT");
}

Result<void> SqliteStore::ping() {
  // Reads the schema page: the file is there and readable, migrated or not.
  return exec("SELECT COUNT(*) FROM sqlite_schema");
}

Result<void> SqliteStore::insert_usage(std::span<const UsageRecord> records) {
  if (records.empty()) {
    return {};
  }
  static const std::string sql = usage_insert_sql(Dialect::kSqlite);
  auto stmt = cached(insert_, sql);
  if (!stmt) {
    return stmt.error();
  }
  if (auto r = exec("BEGIN IMMEDIATE"); !r) {
    return r;
  }
  SpendTally spend;
  RollupTally rollup;
  auto run = [&]() -> Result<void> {
    for (const UsageRecord& record : records) {
      sqlite3_reset(*stmt);
      sqlite3_clear_bindings(*stmt);
      Binder binder{*stmt, 0, SQLITE_OK, {}};
      visit_usage_fields(record, binder);
      if (binder.rc != SQLITE_OK) {
        return Error(ErrorKind::kInternal,
                     fmt::format("sqlite: record {}: {} cannot be stored ({})", record.record_id,
                                 binder.failed_field, sqlite3_errstr(binder.rc)));
      }
      if (sqlite3_step(*stmt) != SQLITE_DONE) {
        return error(fmt::format("inserting record {}", record.record_id));
      }
      if (sqlite3_changes(db_) > 0) {  // 0: a replay, already stored and counted
        spend.add(record.started_at_ms, record.key_group, record.key_name, record.priced,
                  record.cost_micros);
        rollup.add(record);
      }
    }
    if (auto added = add_spend(spend); !added) {
      return added;
    }
    return add_rollup(rollup);
  };
  auto r = run();
  sqlite3_reset(*stmt);
  if (!r) {
    (void)exec("ROLLBACK");
    return r;
  }
  return exec("COMMIT");
}

namespace {

void bind_value(sqlite3_stmt* stmt, int index, std::int64_t v) {
  sqlite3_bind_int64(stmt, index, v);
}
void bind_value(sqlite3_stmt* stmt, int index, const std::string& v) {
  sqlite3_bind_text(stmt, index, v.data(), static_cast<int>(v.size()), SQLITE_STATIC);
}

// Binds a rollup entry: the key's columns, then its sums, from parameter 1 on.
template <class Key, class... Sums>
void bind_entry(sqlite3_stmt* stmt, const Key& key, const Sums&... sums) {
  int index = 0;
  std::apply([&](const auto&... field) { (bind_value(stmt, ++index, field), ...); }, key);
  (bind_value(stmt, ++index, sums), ...);
}

}  // namespace

template <class Entries, class Bind>
Result<void> SqliteStore::upsert_each(Statement& slot, const std::string& sql,
                                      const Entries& entries, std::string_view table, Bind&& bind) {
  auto stmt = cached(slot, sql);
  if (!stmt) {
    return stmt.error();
  }
  for (const auto& entry : entries) {
    sqlite3_reset(*stmt);
    bind(*stmt, entry);
    if (sqlite3_step(*stmt) != SQLITE_DONE) {
      Error e = error(fmt::format("adding to {}", table));
      sqlite3_reset(*stmt);
      return e;
    }
  }
  sqlite3_reset(*stmt);
  return {};
}

Result<void> SqliteStore::add_spend(const SpendTally& spend) {
  static const std::string sql = spend_upsert_sql(Dialect::kSqlite);
  return upsert_each(
      spend_upsert_, sql, spend.sums(), "usage_spend", [](sqlite3_stmt* stmt, const auto& entry) {
        bind_entry(stmt, entry.first, entry.second.cost_micros, entry.second.records);
      });
}

Result<void> SqliteStore::add_rollup(const RollupTally& rollup) {
  static const std::string sql = rollup_upsert_sql(Dialect::kSqlite);
  return upsert_each(rollup_upsert_, sql, rollup.sums(), "usage_rollup",
                     [](sqlite3_stmt* stmt, const auto& entry) {
                       std::apply([&](auto... sum) { bind_entry(stmt, entry.first, sum...); },
                                  entry.second);
                     });
}

Result<std::vector<SpendRow>> SqliteStore::spend_since(std::int64_t from_ms) {
  const SqlText text = spend_since_sql(Dialect::kSqlite, from_ms);
  auto s = prepare(text.sql);
  if (!s) {
    return s.error();
  }
  for (std::size_t i = 0; i < text.params.size(); ++i) {
    sqlite3_bind_int64(s->get(), static_cast<int>(i + 1), std::get<std::int64_t>(text.params[i]));
  }
  std::vector<SpendRow> rows;
  int rc;
  while ((rc = sqlite3_step(s->get())) == SQLITE_ROW) {
    rows.push_back(
        {column_text(s->get(), 0), column_text(s->get(), 1), sqlite3_column_int64(s->get(), 2)});
  }
  if (rc != SQLITE_DONE) {
    return error("reading spend");
  }
  return rows;
}

Result<std::vector<UsageRow>> SqliteStore::query_usage(const UsageQuery& query) {
  auto text = usage_query_sql(Dialect::kSqlite, query);
  if (!text) {
    return text.error();
  }
  auto s = prepare(text->sql);
  if (!s) {
    return s.error();
  }
  int index = 0;
  for (const SqlParam& p : text->params) {
    ++index;
    if (const auto* i = std::get_if<std::int64_t>(&p)) {
      sqlite3_bind_int64(s->get(), index, *i);
    } else {
      const std::string& v = std::get<std::string>(p);
      sqlite3_bind_text(s->get(), index, v.data(), static_cast<int>(v.size()), SQLITE_STATIC);
    }
  }
  std::vector<UsageRow> rows;
  int rc;
  while ((rc = sqlite3_step(s->get())) == SQLITE_ROW) {
    rows.push_back(read_usage_row(
        query.group_by.size(), [&](int i) { return column_text(s->get(), i); },
        [&](int i) { return sqlite3_column_int64(s->get(), i); }));
  }
  if (rc != SQLITE_DONE) {
    return error("querying usage");
  }
  return rows;
}

Result<std::optional<UsageRecord>> SqliteStore::find_usage(std::string_view request_id) {
  static const std::string sql = usage_find_sql(Dialect::kSqlite);
  auto stmt = cached(find_, sql);
  if (!stmt) {
    return stmt.error();
  }
  sqlite3_bind_text(*stmt, 1, request_id.data(), static_cast<int>(request_id.size()),
                    SQLITE_STATIC);
  const int rc = sqlite3_step(*stmt);
  if (rc == SQLITE_DONE) {
    sqlite3_reset(*stmt);
    return std::optional<UsageRecord>();
  }
  if (rc != SQLITE_ROW) {
    Error e = error("finding a usage record");
    sqlite3_reset(*stmt);
    return e;
  }
  UsageRecord record;
  Reader reader{*stmt, 0, std::nullopt};
  visit_usage_fields(record, reader);
  sqlite3_reset(*stmt);
  if (reader.error) {
    return *reader.error;
  }
  return std::optional<UsageRecord>(std::move(record));
}

Result<std::uint64_t> SqliteStore::count_usage() {
  auto stmt = cached(count_, "SELECT COUNT(*) FROM usage_records");
  if (!stmt) {
    return stmt.error();
  }
  if (sqlite3_step(*stmt) != SQLITE_ROW) {
    Error e = error("counting usage records");
    sqlite3_reset(*stmt);
    return e;
  }
  const auto n = static_cast<std::uint64_t>(sqlite3_column_int64(*stmt, 0));
  sqlite3_reset(*stmt);
  return n;
}

// Tenancy statements through SQLite: parameters bound by type, every column read as text.
class SqliteStore::TenancyAccess final : public TenancySql {
 public:
  explicit TenancyAccess(SqliteStore& store) : store_(store) {}

  Dialect dialect() const override { return Dialect::kSqlite; }

  Result<std::vector<TenancyRow>> query(const std::string& sql,
                                        const std::vector<TenancyValue>& params) override {
    auto stmt = store_.prepare(sql);
    if (!stmt) {
      return stmt.error();
    }
    sqlite3_stmt* s = stmt->get();
    int index = 0;
    for (const TenancyValue& v : params) {
      ++index;
      if (const auto* i = std::get_if<std::int64_t>(&v)) {
        sqlite3_bind_int64(s, index, *i);
      } else if (const auto* text = std::get_if<std::string>(&v)) {
        sqlite3_bind_text(s, index, text->data(), static_cast<int>(text->size()), SQLITE_STATIC);
      } else {
        sqlite3_bind_null(s, index);
      }
    }
    std::vector<TenancyRow> rows;
    int rc;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
      TenancyRow& row = rows.emplace_back();
      const int columns = sqlite3_column_count(s);
      row.reserve(columns);
      for (int c = 0; c < columns; ++c) {
        if (sqlite3_column_type(s, c) == SQLITE_NULL) {
          row.emplace_back();
        } else {
          row.emplace_back(column_text(s, c));
        }
      }
    }
    if (rc != SQLITE_DONE) {
      return store_.error("tenancy statement");
    }
    return rows;
  }

 private:
  SqliteStore& store_;
};

template <class T, class Body>
Result<T> SqliteStore::in_transaction(const char* begin, Body&& body) {
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

Result<TenancyState> SqliteStore::load_tenancy() {
  TenancyAccess access(*this);
  // A deferred transaction reads one snapshot of the WAL.
  return in_transaction<TenancyState>("BEGIN", [&] { return load_tenancy_in(access); });
}

Result<std::uint64_t> SqliteStore::tenancy_revision() {
  TenancyAccess access(*this);
  return tenancy_revision_in(access);
}

Result<std::uint64_t> SqliteStore::commit_tenancy(const TenancyCommit& commit) {
  TenancyAccess access(*this);
  return in_transaction<std::uint64_t>("BEGIN IMMEDIATE",
                                       [&] { return commit_tenancy_in(access, commit, now_ms()); });
}

Result<std::optional<IdempotentReply>> SqliteStore::find_idempotent(std::string_view key) {
  TenancyAccess access(*this);
  return find_idempotent_in(access, key);
}

Result<std::vector<AuditEntry>> SqliteStore::list_audit(const AuditQuery& query) {
  TenancyAccess access(*this);
  return list_audit_in(access, query);
}

}  // namespace sluice::store
