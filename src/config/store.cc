#include "config/store.h"

#include "config/loader.h"

namespace sluice::config {

StoreSettings load_store(const YamlField& field) {
  StoreSettings s;
  if (!field.is_map()) {
    const std::string text = field.text();
    if (text != "none") {
      field.fail("expected none, {sqlite: PATH} or {postgres: URL}");
    }
    return s;
  }
  const YamlMap m = field.map({"sqlite", "postgres"});
  const std::optional<YamlField> sqlite = m.get("sqlite");
  const std::optional<YamlField> postgres = m.get("postgres");
  if (sqlite && postgres) {
    postgres->fail("set either sqlite or postgres, not both");
  }
  if (sqlite) {
    s.kind = StoreSettings::Kind::kSqlite;
    s.sqlite_path = sqlite->text();
    if (s.sqlite_path.empty()) {
      sqlite->fail("empty path");
    }
  } else if (postgres) {
    s.kind = StoreSettings::Kind::kPostgres;
    s.postgres_url = postgres->text();
    if (!s.postgres_url.starts_with("postgresql://") &&
        !s.postgres_url.starts_with("postgres://")) {
      postgres->fail("expected a postgresql:// URL (value not shown)");
    }
  } else {
    field.fail("expected none, {sqlite: PATH} or {postgres: URL}");
  }
  return s;
}

}  // namespace sluice::config
