#include "store/sqlite_store.h"

#include <chrono>
#include <limits>

#include <sqlite3.h>

#include "store/migration_runner.h"
#include "store/tenancy_sql.h"

namespace sluice::store {
namespace {

// sql/sqlite/005_segments.sql: its data step moves the ledger into segments.
constexpr int kSegmentsMigration = 5;

std::int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

constexpr auto column_text = &SqliteConnection::column_text;

}  // namespace

Result<std::unique_ptr<SqliteStore>> SqliteStore::open(const std::string& path) {
  auto db = SqliteConnection::open(path);
  if (!db) {
    return db.error();
  }
  return std::unique_ptr<SqliteStore>(new SqliteStore(std::move(*db)));
}

// The migration runner's transaction on this connection: BEGIN IMMEDIATE takes the write lock
// first, so a second process migrating at the same moment waits (busy timeout) for this one.
class SqliteStore::MigrationAccess final : public MigrationSession {
 public:
  explicit MigrationAccess(SqliteStore& store) : store_(store) {}

  Dialect dialect() const override { return Dialect::kSqlite; }
  Result<void> begin() override { return store_.db_->exec("BEGIN IMMEDIATE"); }
  Result<void> commit() override { return store_.db_->exec("COMMIT"); }
  void rollback() override { (void)store_.db_->exec("ROLLBACK"); }
  Result<void> execute(std::string_view sql) override { return store_.db_->exec(std::string(sql)); }

  Result<std::vector<std::int64_t>> query_integers(std::string_view sql) override {
    auto stmt = store_.db_->prepare(std::string(sql));
    if (!stmt) {
      return stmt.error();
    }
    std::vector<std::int64_t> out;
    int rc;
    while ((rc = sqlite3_step(stmt->get())) == SQLITE_ROW) {
      out.push_back(sqlite3_column_int64(stmt->get(), 0));
    }
    if (rc != SQLITE_DONE) {
      return store_.db_->error("reading schema_migrations");
    }
    return out;
  }

  Result<void> data_step(const Migration& migration) override {
    return migration.version == kSegmentsMigration ? store_.ledger_.move_from_usage_records()
                                                   : Result<void>();
  }

 private:
  SqliteStore& store_;
};

Result<void> SqliteStore::migrate(std::span<const Migration> list, int up_to) {
  MigrationAccess access(*this);
  return run_migrations(access, list, now_ms(), up_to);
}

Result<void> SqliteStore::migrate() {
  return migrate(migrations(Dialect::kSqlite), std::numeric_limits<int>::max());
}

Result<void> SqliteStore::migrate_to_for_test(int version) {
  return migrate(migrations(Dialect::kSqlite), version);
}

Result<void> SqliteStore::migrate_with_for_test(std::span<const Migration> list) {
  return migrate(list, std::numeric_limits<int>::max());
}

Result<void> SqliteStore::ping() {
  // Reads the schema page: the file is there and readable, migrated or not.
  return db_->exec("SELECT COUNT(*) FROM sqlite_schema");
}

Result<void> SqliteStore::insert_usage(std::span<const UsageRecord> records) {
  return ledger_.insert(records);
}

Result<std::vector<UsageRow>> SqliteStore::query_usage(const UsageQuery& query) {
  return ledger_.query(query);
}

Result<std::optional<UsageRecord>> SqliteStore::find_usage(std::string_view request_id) {
  return ledger_.find(request_id);
}

Result<std::uint64_t> SqliteStore::count_usage() { return ledger_.count(); }

Result<void> SqliteStore::export_usage(std::int64_t from_ms, std::int64_t to_ms,
                                       const std::function<bool(const UsageRecord&)>& each) {
  return ledger_.export_range(from_ms, to_ms, each);
}

Result<std::vector<SpendRow>> SqliteStore::spend_since(std::int64_t from_ms) {
  return ledger_.spend_since(from_ms);
}

// Tenancy statements through SQLite: parameters bound by type, every column read as text.
class SqliteStore::TenancyAccess final : public TenancySql {
 public:
  explicit TenancyAccess(SqliteStore& store) : store_(store) {}

  Dialect dialect() const override { return Dialect::kSqlite; }

  Result<std::vector<TenancyRow>> query(const std::string& sql,
                                        const std::vector<TenancyValue>& params) override {
    auto stmt = store_.db_->prepare(sql);
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
      return store_.db_->error("tenancy statement");
    }
    return rows;
  }

 private:
  SqliteStore& store_;
};

Result<TenancyState> SqliteStore::load_tenancy() {
  TenancyAccess access(*this);
  // A deferred transaction reads one snapshot of the WAL.
  return db_->in_transaction<TenancyState>("BEGIN", [&] { return load_tenancy_in(access); });
}

Result<std::uint64_t> SqliteStore::tenancy_revision() {
  TenancyAccess access(*this);
  return tenancy_revision_in(access);
}

Result<std::uint64_t> SqliteStore::commit_tenancy(const TenancyCommit& commit) {
  TenancyAccess access(*this);
  return db_->in_transaction<std::uint64_t>(
      "BEGIN IMMEDIATE", [&] { return commit_tenancy_in(access, commit, now_ms()); });
}

Result<std::optional<IdempotentReply>> SqliteStore::find_idempotent(std::string_view key,
                                                                    std::int64_t now_ms) {
  TenancyAccess access(*this);
  return find_idempotent_in(access, key, now_ms);
}

Result<void> SqliteStore::purge_idempotent(std::int64_t now_ms) {
  TenancyAccess access(*this);
  return purge_idempotent_in(access, now_ms);
}

Result<std::vector<AuditEntry>> SqliteStore::list_audit(const AuditQuery& query) {
  TenancyAccess access(*this);
  return list_audit_in(access, query);
}

}  // namespace sluice::store
