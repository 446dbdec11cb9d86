#pragma once

#include <optional>

#include "config/config.h"

namespace sluice::config {

class YamlField;
struct LoadState;

// One `routes[]` entry: its aliases declared in `declared` (unique across routes), its policy
// tree (`policy`, a `targets` list or the provider/model shorthand) over declared providers,
// its retry settings over `retry_defaults`. Targets whose provider is skipped leave the tree
// (a note each); nullopt when none is left (the route is skipped, a note says why). Throws
// ConfigError.
std::optional<Route> load_route(const YamlField& field, const RetrySettings& retry_defaults,
                                LoadState& declared);

}  // namespace sluice::config
