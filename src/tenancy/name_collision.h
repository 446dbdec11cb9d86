#pragma once

#include <optional>
#include <string>
#include <vector>

#include "config/config.h"
#include "tenancy/key_set.h"

namespace sluice::tenancy {

// A key of the config file and a key of the store that have the same name. Names are what usage
// records, logs and `limits.keys.<name>` know a key by, so one name is one key: a config reload
// that brings a store key's name is refused, and a store key that has a config key's name (made
// on an instance whose config lacked it, or before the config got it) is refused in the data
// plane until it is renamed (KeyVerdict::kNameTaken).
struct NameCollision {
  std::string name;
  std::string config_source;  // where the config file defines its key ("sluice.yaml:12")
  std::string store_key_id;
  std::string store_group;
};

// The first key of `config_keys` whose name a key of `store_keys` has, revoked keys included
// (a store name is never reused), except store keys the set already refuses for their name (the
// running config has it: keeping it is no new collision); nullopt when none, or without a key
// set yet. Pure.
std::optional<NameCollision> find_name_collision(const std::vector<config::Key>& config_keys,
                                                 const KeySet* store_keys);

// "key name indexer (sluice.yaml:12) is the store key key_5f0c2a9e1b7d3c44's, in key group
// research"
std::string describe(const NameCollision& collision);

}  // namespace sluice::tenancy
