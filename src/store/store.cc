#include "store/store.h"

#include <array>
#include <filesystem>
#include <utility>

#include "config/config.h"
#include "store/postgres_store.h"
#include "store/sqlite_store.h"

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
  UsageQuery q;
  q.from_ms = from_ms;
  q.group_by = {Dimension::kKeyGroup, Dimension::kKey};
  q.limit = UINT32_MAX;
  auto rows = query_usage(q);
  if (!rows) {
    return std::move(rows).error();
  }
  std::vector<SpendRow> out;
  out.reserve(rows->size());
  for (UsageRow& row : *rows) {
    out.push_back({std::move(row.group[0]), std::move(row.group[1]), row.cost_micros});
  }
  return out;
}

}  // namespace sluice::store
