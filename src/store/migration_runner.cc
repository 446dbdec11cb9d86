#include "store/migration_runner.h"

#include <algorithm>
#include <string>

#include <fmt/format.h>

namespace sluice::store {
namespace {

std::string_view create_table_sql(Dialect dialect) {
  return dialect == Dialect::kSqlite
             ? "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, "
               "name TEXT NOT NULL, applied_at_ms INTEGER NOT NULL) STRICT"
             : "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, "
               "name TEXT NOT NULL, applied_at_ms BIGINT NOT NULL)";
}

// A string literal both dialects read the same way (standard quoting: ' doubled).
std::string quoted(std::string_view text) {
  std::string out = "'";
  for (char c : text) {
    out += c;
    if (c == '\'') {
      out += c;
    }
  }
  return out + "'";
}

Result<void> apply_pending(MigrationSession& session, std::span<const Migration> migrations,
                           std::int64_t applied_at_ms, int up_to) {
  if (auto r = session.execute(create_table_sql(session.dialect())); !r) {
    return r;
  }
  auto applied = session.query_integers("SELECT version FROM schema_migrations");
  if (!applied) {
    return applied.error();
  }
  for (const Migration& m : migrations) {
    if (m.version > up_to) {
      break;
    }
    if (std::find(applied->begin(), applied->end(), m.version) != applied->end()) {
      continue;
    }
    auto r = session.execute(m.sql);
    if (r) {
      r = session.data_step(m);
    }
    if (!r) {
      return Error(r.error().kind(),
                   fmt::format("migration {:03}_{}: {}", m.version, m.name, r.error().message()));
    }
    if (auto recorded = session.execute(fmt::format(
            "INSERT INTO schema_migrations (version, name, applied_at_ms) VALUES ({}, {}, {})",
            m.version, quoted(m.name), applied_at_ms));
        !recorded) {
      return recorded;
    }
  }
  return {};
}

}  // namespace

Result<void> run_migrations(MigrationSession& session, std::span<const Migration> migrations,
                            std::int64_t applied_at_ms, int up_to) {
  if (auto r = session.begin(); !r) {
    return r;
  }
  auto r = apply_pending(session, migrations, applied_at_ms, up_to);
  if (r) {
    r = session.commit();
  }
  if (!r) {
    session.rollback();
  }
  return r;
}

}  // namespace sluice::store
