#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "config/adapter_schema.h"

namespace sluice::config {

class YamlMap;
struct Provider;

// The adapter kinds a provider may name (LoadOptions::adapters) and their options, as the
// provider loader checks a provider against them. Borrows `adapters` for its lifetime.
class AdapterCatalog {
 public:
  explicit AdapterCatalog(std::span<const AdapterSchema> adapters);

  const AdapterSchema* find(std::string_view name) const;
  // The adapter names, sorted and comma-separated, or "none are built in".
  std::string names() const;
  // Every field a provider's mapping may hold: the common ones and the top-level name of each
  // adapter's options.
  std::span<const std::string_view> provider_fields() const { return provider_fields_; }

  // Fails at the first field of `m` that only other adapters than `schema` take, naming them.
  void check_option_groups(const YamlMap& m, const AdapterSchema& schema) const;
  // Reads the options `schema` declares, typed and range-checked, into p.options.
  static void read_options(const YamlMap& m, const AdapterSchema& schema, Provider& p);

 private:
  std::span<const AdapterSchema> adapters_;
  std::vector<std::string_view> provider_fields_;
};

}  // namespace sluice::config
