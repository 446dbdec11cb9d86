#pragma once

#include <span>
#include <string>
#include <vector>

namespace sluice::config {

class YamlField;
struct LoadState;

struct Key {
  std::string name;  // shown in logs; not secret
  // The key group (team, application) the key belongs to: routing conditions, usage records
  // and limits are per group. "" = none.
  std::string group;
  std::string sha256_hex;  // SHA-256 of the secret key, lower-case hex
  // Aliases this key may call; empty = all aliases.
  std::vector<std::string> allowed_aliases;
  std::string source;
};

// One `keys[]` entry: its secret (`key`, hashed here, or `key_sha256`) distinct from every key
// in `earlier`, its name too, and its `models` aliases that some route declares. Throws
// ConfigError; messages never show the secret or its digest.
Key load_key(const YamlField& field, std::span<const Key> earlier, const LoadState& declared);

}  // namespace sluice::config
