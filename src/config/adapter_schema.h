#pragma once

#include <cstdint>
#include <span>
#include <string_view>

namespace sluice::config {

// What config validation knows about one adapter kind. The adapters declare these
// (providers/registry.h adapter_schemas()); config checks a provider's fields against its
// adapter's schema so a mistake is reported with file:line like any other.
struct AdapterOption {
  enum class Type : std::uint8_t { kString, kUnsigned, kMillis, kBool, kChoice };
  // The field as written under the provider: "max_tokens_field", or "group.name" for a field
  // inside a nested mapping ("mock.embedding_dimensions").
  std::string_view name;
  Type type = Type::kString;
  std::uint64_t min = 0;  // kUnsigned, kMillis (inclusive)
  std::uint64_t max = 0;
  std::span<const std::string_view> choices;  // kChoice
};

struct AdapterSchema {
  std::string_view name;  // the `adapter:` value
  // base_url, api_key and tls are meaningful (the adapter talks to a server).
  bool network = true;
  std::span<const AdapterOption> options;
};

}  // namespace sluice::config
