#pragma once

#include <cstdint>
#include <span>
#include <string_view>

namespace sluice::store {

enum class Dialect : std::uint8_t { kSqlite, kPostgres };

// One numbered schema change: sql/<dialect>/NNN_name.sql, embedded into the binary at build
// time (cmake/embed_sql.cmake). Store::migrate applies the versions not yet recorded in
// schema_migrations, in order, in one transaction (migration_runner.h: the schema moves to the
// newest version or stays where it was). Released migrations are never edited: a change is a new,
// higher number (the admission issue's tables come as 002_..., 003_...).
struct Migration {
  int version = 0;
  std::string_view name;  // "usage"
  std::string_view sql;   // one or more statements
};

// The dialect's migrations, ascending by version.
std::span<const Migration> migrations(Dialect dialect);

}  // namespace sluice::store
