#include "cache/key_aliases.h"

#include <algorithm>

namespace sluice::cache {

KeyAliases::KeyAliases(std::size_t capacity)
    : per_shard_(std::max<std::size_t>(1, capacity / kShards)) {}

std::optional<Key> KeyAliases::find(const Key& alias) const {
  const Shard& shard = shard_of(alias);
  std::lock_guard lock(shard.mu);
  auto it = shard.keys.find(alias);
  if (it == shard.keys.end()) {
    return std::nullopt;
  }
  return it->second;
}

void KeyAliases::remember(const Key& alias, const Key& key) {
  Shard& shard = shard_of(alias);
  std::lock_guard lock(shard.mu);
  auto [it, added] = shard.keys.try_emplace(alias, key);
  if (!added) {
    it->second = key;
    return;
  }
  if (shard.ring.size() < per_shard_) {
    shard.ring.push_back(alias);
    return;
  }
  shard.keys.erase(shard.ring[shard.next]);
  shard.ring[shard.next] = alias;
  shard.next = (shard.next + 1) % per_shard_;
}

}  // namespace sluice::cache
