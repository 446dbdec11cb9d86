#include "tenancy/name_collision.h"

#include <fmt/format.h>

namespace sluice::tenancy {

std::optional<NameCollision> find_name_collision(const std::vector<config::Key>& config_keys,
                                                 const KeySet* store_keys) {
  if (store_keys == nullptr) {
    return std::nullopt;
  }
  for (const config::Key& c : config_keys) {
    const StoreKey* s = store_keys->find_named(c.name);
    if (s != nullptr && !s->name_taken) {
      return NameCollision{c.name, c.source, s->key.id, s->key.group};
    }
  }
  return std::nullopt;
}

std::string describe(const NameCollision& c) {
  return fmt::format("key name {} ({}) is the store key {}'s, in key group {}", c.name,
                     c.config_source, c.store_key_id, c.store_group);
}

}  // namespace sluice::tenancy
