#pragma once

#include "config/config.h"

namespace sluice::config {

class YamlField;

// `state:` (`{ backend: local }` or `{ redis: { url, timeout_ms, on_error, key_prefix } }`).
// Throws ConfigError; messages never show the URL.
StateSettings load_state(const YamlField& field);

}  // namespace sluice::config
