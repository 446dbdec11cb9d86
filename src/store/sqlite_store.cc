#include "store/sqlite_store.h"

#include <chrono>
#include <limits>

#include <fmt/format.h>
#include <sqlite3.h>

#include "store/migrations.h"
#include "store/tenancy_sql.h"

namespace sluice::store {
namespace {

// sql/sqlite/005_segments.sql: its data step is SqliteLedger::move_from_usage_records.
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

Result<void> SqliteStore::migrate() { return migrate_up_to(std::numeric_limits<int>::max()); }

Result<void> SqliteStore::migrate_up_to(int version) {
  // BEGIN IMMEDIATE takes the write lock first, so two processes starting together apply each
  // migration once: the second waits (busy timeout), then finds it recorded.
  if (auto r =
          db_->exec("CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, "
                    "name TEXT NOT NULL, applied_at_ms INTEGER NOT NULL) STRICT;"
                    "BEGIN IMMEDIATE;");
      !r) {
    return r;
  }
  auto run = [&]() -> Result<void> {
    auto applied = db_->prepare("SELECT 1 FROM schema_migrations WHERE version = ?");
    auto record = db_->prepare(
        "INSERT INTO schema_migrations (version, name, applied_at_ms) "
        "VALUES (?, ?, ?)");
    if (!applied || !record) {
      return !applied ? applied.error() : record.error();
    }
    for (const Migration& m : migrations(Dialect::kSqlite)) {
      if (m.version > version) {
        break;
      }
      sqlite3_reset(applied->get());
      sqlite3_bind_int(applied->get(), 1, m.version);
      const int rc = sqlite3_step(applied->get());
      if (rc == SQLITE_ROW) {
        continue;
      }
      if (rc != SQLITE_DONE) {
        return db_->error("reading schema_migrations");
      }
      auto r = db_->exec(std::string(m.sql));
      if (r && m.version == kSegmentsMigration) {
        r = ledger_.move_from_usage_records();
      }
      if (!r) {
        return Error(r.error().kind(),
                     fmt::format("migration {:03}_{}: {}", m.version, m.name, r.error().message()));
      }
      sqlite3_reset(record->get());
      sqlite3_bind_int(record->get(), 1, m.version);
      sqlite3_bind_text(record->get(), 2, m.name.data(), static_cast<int>(m.name.size()),
                        SQLITE_STATIC);
      sqlite3_bind_int64(record->get(), 3, now_ms());
      if (sqlite3_step(record->get()) != SQLITE_DONE) {
        return db_->error("recording a migration");
      }
    }
    return {};
  };
  if (auto r = run(); !r) {
    (void)db_->exec("ROLLBACK");
    return r;
  }
  return db_->exec("COMMIT");
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

Result<std::optional<IdempotentReply>> SqliteStore::find_idempotent(std::string_view key) {
  TenancyAccess access(*this);
  return find_idempotent_in(access, key);
}

Result<std::vector<AuditEntry>> SqliteStore::list_audit(const AuditQuery& query) {
  TenancyAccess access(*this);
  return list_audit_in(access, query);
}

}  // namespace sluice::store
