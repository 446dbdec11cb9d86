#include "config/adapter_catalog.h"

#include <algorithm>

#include "config/loader.h"

namespace sluice::config {
namespace {

std::string_view group_of(std::string_view option) { return option.substr(0, option.find('.')); }

std::string option_value(const YamlField& f, const AdapterOption& o) {
  switch (o.type) {
    case AdapterOption::Type::kUnsigned:
      return std::to_string(f.unsigned_in(o.min, o.max));
    case AdapterOption::Type::kMillis:
      return std::to_string(f.millis_in(o.min, o.max).count());
    case AdapterOption::Type::kBool:
      return f.boolean() ? "true" : "false";
    case AdapterOption::Type::kChoice: {
      std::string v = f.text();
      if (std::find(o.choices.begin(), o.choices.end(), v) == o.choices.end()) {
        std::vector<std::string> expected(o.choices.begin(), o.choices.end());
        f.fail("unknown value " + in_quotes(v) + " (expected: " + join(expected) + ")");
      }
      return v;
    }
    case AdapterOption::Type::kString:
      break;
  }
  return f.text();
}

}  // namespace

AdapterCatalog::AdapterCatalog(std::span<const AdapterSchema> adapters)
    : adapters_(adapters),
      provider_fields_({"id", "adapter", "base_url", "api_key", "requires_env", "headers",
                        "forward_headers", "pool", "timeout", "tls"}) {
  for (const AdapterSchema& a : adapters_) {
    for (const AdapterOption& o : a.options) {
      const std::string_view top = group_of(o.name);
      if (std::find(provider_fields_.begin(), provider_fields_.end(), top) ==
          provider_fields_.end()) {
        provider_fields_.push_back(top);
      }
    }
  }
}

const AdapterSchema* AdapterCatalog::find(std::string_view name) const {
  for (const AdapterSchema& a : adapters_) {
    if (a.name == name) {
      return &a;
    }
  }
  return nullptr;
}

std::string AdapterCatalog::names() const {
  std::vector<std::string> names;
  for (const AdapterSchema& a : adapters_) {
    names.emplace_back(a.name);
  }
  std::sort(names.begin(), names.end());
  return names.empty() ? "none are built in" : join(names);
}

void AdapterCatalog::check_option_groups(const YamlMap& m, const AdapterSchema& schema) const {
  for (std::string_view key : provider_fields_) {
    auto f = m.get(key);
    if (!f) {
      continue;
    }
    bool mine = false;
    std::vector<std::string> owners;
    for (const AdapterSchema& a : adapters_) {
      for (const AdapterOption& o : a.options) {
        if (group_of(o.name) == key) {
          if (&a == &schema) {
            mine = true;
          } else if (std::find(owners.begin(), owners.end(), a.name) == owners.end()) {
            owners.emplace_back(a.name);
          }
        }
      }
    }
    if (!mine && !owners.empty()) {
      f->fail("only valid for adapter " + join(owners, " or "));
    }
  }
}

void AdapterCatalog::read_options(const YamlMap& m, const AdapterSchema& schema, Provider& p) {
  // Nested groups first: their mapping must hold only this adapter's fields.
  std::vector<std::string_view> groups;
  for (const AdapterOption& o : schema.options) {
    const std::size_t dot = o.name.find('.');
    if (dot != std::string_view::npos &&
        std::find(groups.begin(), groups.end(), o.name.substr(0, dot)) == groups.end()) {
      groups.push_back(o.name.substr(0, dot));
    }
  }
  for (std::string_view group : groups) {
    auto g = m.get(group);
    if (!g) {
      continue;
    }
    std::vector<std::string_view> names;
    for (const AdapterOption& o : schema.options) {
      if (group_of(o.name) == group && o.name.size() > group.size()) {
        names.push_back(o.name.substr(group.size() + 1));
      }
    }
    const YamlMap inner = g->map(names);
    for (const AdapterOption& o : schema.options) {
      if (group_of(o.name) == group && o.name.size() > group.size()) {
        if (auto f = inner.get(o.name.substr(group.size() + 1))) {
          p.options.emplace(std::string(o.name), option_value(*f, o));
        }
      }
    }
  }
  for (const AdapterOption& o : schema.options) {
    if (o.name.find('.') == std::string_view::npos) {
      if (auto f = m.get(o.name)) {
        p.options.emplace(std::string(o.name), option_value(*f, o));
      }
    }
  }
}

}  // namespace sluice::config
