#pragma once

#include <array>
#include <cstdint>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <vector>

#include "cache/key.h"

namespace sluice::cache {

// Which answer key a request body had: a lookup that skips decoding the body into IR.
//
// A cache hit must compute the request's answer key (cache/key.h answer_key), and that needs
// the IR, which for a 400 KB prompt costs more than relaying the request would. The key is a
// pure function of the request's bytes within its scope (body_alias): the same bytes on the
// same path, route, tenant and vary headers always decode to the same IR. So the first request
// that computes a key remembers it under its bytes' digest, and a repeat of those bytes takes
// the key from here. An alias never goes stale (an entry's freshness is the answer store's
// business), so the table is only bounded: each shard forgets its oldest alias when full.
//
// 16 shards, each with its own mutex held for a map lookup: no lock shared by all requests.
// Thread-safe.
class KeyAliases {
 public:
  // At most `capacity` aliases (at least one per shard).
  explicit KeyAliases(std::size_t capacity);
  KeyAliases(const KeyAliases&) = delete;
  KeyAliases& operator=(const KeyAliases&) = delete;

  std::optional<Key> find(const Key& alias) const;
  void remember(const Key& alias, const Key& key);

  // What one alias costs in memory, about (docs/cache.md): the map node, the ring slot.
  static constexpr std::size_t kBytesPerAlias = 128;

 private:
  static constexpr std::size_t kShards = 16;
  struct Shard {
    mutable std::mutex mu;
    std::unordered_map<Key, Key, KeyHash> keys;
    std::vector<Key> ring;  // insertion order; the oldest is overwritten first
    std::size_t next = 0;
  };
  Shard& shard_of(const Key& alias) { return shards_[alias[31] % kShards]; }
  const Shard& shard_of(const Key& alias) const { return shards_[alias[31] % kShards]; }

  const std::size_t per_shard_;
  std::array<Shard, kShards> shards_;
};

}  // namespace sluice::cache
