#pragma once

#include <span>

#include "config/config.h"

namespace sluice::config {

class YamlField;
struct LoadState;

// One `keys[]` entry: its secret (`key`, hashed here, or `key_sha256`) distinct from every key
// in `earlier`, its name too, and its `models` aliases that some route declares. Throws
// ConfigError; messages never show the secret or its digest.
Key load_key(const YamlField& field, std::span<const Key> earlier, const LoadState& declared);

}  // namespace sluice::config
