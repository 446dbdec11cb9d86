#pragma once

#include <span>
#include <string>
#include <vector>

namespace sluice::config {

class YamlField;
struct LoadState;

struct Key {
  // Immutable identity of the key: "config:<name>" for a key of this file, the store's id
  // ("key_" + 16 hex) for a store key (tenancy/key_set.h). What owns per-key state (rate
  // buckets, budget spend, stored Responses): a name can be renamed or reused, an id cannot.
  std::string id;
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
