#pragma once

#include <span>

#include "config/config.h"

namespace sluice::config {

class YamlField;
struct LoadState;

// `limits:` (RPM, TPM and concurrency per key, key group, alias and provider). Read after
// keys, routes and providers, which it names: a name must be a key in `keys` (any name when
// `tenancy_enabled`: store keys are not known here) or a declared alias or provider. Throws
// ConfigError.
LimitSettings load_limits(const YamlField& field, std::span<const Key> keys, bool tenancy_enabled,
                          const LoadState& declared);

}  // namespace sluice::config
