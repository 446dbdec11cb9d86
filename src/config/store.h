#pragma once

#include <cstdint>
#include <string>

namespace sluice::config {

class YamlField;

// Where usage records (and, later, keys, budgets and prices) are kept.
struct StoreSettings {
  enum class Kind : std::uint8_t { kNone, kSqlite, kPostgres };
  Kind kind = Kind::kNone;
  std::string sqlite_path;   // kSqlite
  std::string postgres_url;  // kPostgres; may hold a password: never logged
};

// `store:` (`none`, `{ sqlite: PATH }` or `{ postgres: URL }`). Throws ConfigError; messages
// never show the URL.
StoreSettings load_store(const YamlField& field);

}  // namespace sluice::config
