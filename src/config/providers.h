#pragma once

#include <optional>
#include <string>
#include <vector>

#include "config/config.h"
#include "config/interpolate.h"

namespace sluice::config {

class AdapterCatalog;
class YamlField;
struct LoadState;

// One `providers[]` entry, checked against its adapter's schema, declared in `declared`
// whether it is active or not. nullopt when a `requires_env` variable is unset or empty (the
// provider is skipped, a note says why). Throws ConfigError; messages never show api_key or
// header values.
std::optional<Provider> load_provider(const YamlField& field, const AdapterCatalog& adapters,
                                      const EnvLookup& getenv, LoadState& declared);

// A `timeout:` block over `base` (fields not given keep base's values). `check` (first_byte_ms
// within total_ms) is false where base is unknown: a skipped provider's.
Timeouts load_timeouts(const YamlField& field, Timeouts base, bool check = true);

}  // namespace sluice::config
