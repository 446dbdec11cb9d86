#include "store/store.h"

#include <array>
#include <filesystem>
#include <limits>
#include <map>
#include <utility>

#include "config/config.h"
#include "store/postgres_store.h"
#include "store/sqlite_store.h"
#include "store/usage_sql.h"

namespace sluice::store {
namespace {

constexpr std::array<std::pair<Dimension, std::string_view>, 10> kDimensionNames = {{
    {Dimension::kKey, "key"},
    {Dimension::kKeyGroup, "key_group"},
    {Dimension::kTenant, "tenant"},
    {Dimension::kFeature, "feature"},
    {Dimension::kAlias, "alias"},
    {Dimension::kProvider, "provider"},
    {Dimension::kModel, "model"},
    {Dimension::kOutcome, "outcome"},
    {Dimension::kDay, "day"},
    {Dimension::kHour, "hour"},
}};

}  // namespace

std::string_view to_string(Dimension d) {
  for (const auto& [dimension, name] : kDimensionNames) {
    if (dimension == d) {
      return name;
    }
  }
  return "unknown";
}

std::optional<Dimension> parse_dimension(std::string_view name) {
  for (const auto& [dimension, known] : kDimensionNames) {
    if (known == name) {
      return dimension;
    }
  }
  return std::nullopt;
}

Result<std::unique_ptr<Store>> open_store(const config::StoreSettings& settings, OpenMode mode) {
  switch (settings.kind) {
    case config::StoreSettings::Kind::kNone:
      return std::unique_ptr<Store>();
    case config::StoreSettings::Kind::kSqlite: {
      std::error_code ec;
      if (mode == OpenMode::kExisting && !std::filesystem::exists(settings.sqlite_path, ec)) {
        return Error(ErrorKind::kNotFound, settings.sqlite_path + ": no such database file");
      }
      auto store = SqliteStore::open(settings.sqlite_path);
      if (!store) {
        return store.error();
      }
      return std::unique_ptr<Store>(std::move(*store));
    }
    case config::StoreSettings::Kind::kPostgres: {
      auto store = PostgresStore::open(settings.postgres_url);
      if (!store) {
        return store.error();
      }
      return std::unique_ptr<Store>(std::move(*store));
    }
  }
  return Error(ErrorKind::kInternal, "unknown store kind");
}

Result<std::vector<SpendRow>> Store::spend_since(std::int64_t from_ms) {
  std::map<std::pair<std::string, std::string>, std::int64_t> sums;
  auto read =
      export_usage(from_ms, std::numeric_limits<std::int64_t>::max(), [&](const UsageRecord& r) {
        add_spend(sums[{r.key_group, r.key_id}], r.priced ? r.cost_micros : 0);
        return true;
      });
  if (!read) {
    return std::move(read).error();
  }
  std::vector<SpendRow> out;
  out.reserve(sums.size());
  for (auto& [key, micros] : sums) {
    out.push_back({key.first, key.second, micros});
  }
  return out;
}

}  // namespace sluice::store
