#pragma once

#include "config/config.h"

namespace sluice::config {

class YamlField;

// `admin:` (the admin listener and its credential: `key`, hashed here, or `key_sha256`).
// Throws ConfigError; messages never show either value.
AdminSettings load_admin(const YamlField& field);

}  // namespace sluice::config
