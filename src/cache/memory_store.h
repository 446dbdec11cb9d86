#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "cache/entry.h"
#include "cache/key.h"

namespace sluice::cache {

// The in-process answer store, shared by every worker: a memory bound in bytes, entries that
// expire, and an eviction policy that a scan cannot flush.
//
// Eviction is a segmented LRU per shard: a new entry enters the probation segment; a second
// hit moves it to the protected segment (at most 80% of the shard). Eviction takes probation's
// least recent entry first, so a burst of one-off questions (a batch job, a crawler) evicts
// only other one-off entries, never the answers that are asked again and again.
//
// 16 shards, each with its own mutex held for a map lookup and a list splice: no lock is
// shared by all requests, and no I/O or allocation of an answer happens under one (entries are
// built before put and released after the lock). Thread-safe.
class MemoryStore {
 public:
  using SteadyTime = std::chrono::steady_clock::time_point;

  explicit MemoryStore(std::uint64_t capacity_bytes);
  MemoryStore(const MemoryStore&) = delete;
  MemoryStore& operator=(const MemoryStore&) = delete;

  enum class Freshness : std::uint8_t { kFresh, kStale };
  struct Found {
    std::shared_ptr<const Entry> entry;
    Freshness freshness = Freshness::kFresh;
    // A stale entry: this finder is the one to refresh it (it goes to the origin, and its
    // answer replaces the entry); every other finder is served the stale entry meanwhile.
    // The claim lapses after `refresh_window`, so a refresh that fails is retried.
    bool refresh = false;
  };

  // The entry under `key` at `now`, or nullopt (absent, or past its stale time: then erased).
  std::optional<Found> find(const Key& key, SteadyTime now,
                            std::chrono::milliseconds refresh_window = std::chrono::seconds(30));
  // Stores (or replaces) the entry under `key`; false when it is larger than a shard may hold.
  bool put(const Key& key, std::shared_ptr<const Entry> entry);
  // Drops the entries of route `alias` (its first alias), of `tenant` (KeyScope::tenant) and
  // whose key in hex (to_hex, as the access log's cache_key) starts with `key_prefix`; ""
  // matches any. The count dropped.
  std::size_t purge(std::string_view alias, std::string_view tenant,
                    std::string_view key_prefix = {});
  // A new bound (a config reload); evicts down to it at once.
  void set_capacity(std::uint64_t capacity_bytes);

  struct Stats {
    std::uint64_t entries = 0;
    std::uint64_t bytes = 0;
    std::uint64_t capacity = 0;
    std::uint64_t evictions = 0;  // for space, not expiry
    std::uint64_t expirations = 0;
  };
  Stats stats() const;

 private:
  static constexpr std::size_t kShards = 16;

  // Recency lists hold keys, not map iterators: a rehash invalidates iterators.
  using Order = std::list<Key>;
  struct Node {
    std::shared_ptr<const Entry> entry;
    bool protected_segment = false;
    Order::iterator position;
    SteadyTime refresh_claimed_until{};
  };
  using Index = std::unordered_map<Key, Node, KeyHash>;
  struct Shard {
    mutable std::mutex mu;
    Index index;
    Order probation;  // most recent first
    Order protect;    // most recent first
    std::uint64_t probation_bytes = 0;
    std::uint64_t protected_bytes = 0;
    std::uint64_t capacity = 0;
  };

  Shard& shard_of(const Key& key) { return shards_[key[31] % kShards]; }
  using Dropped = std::vector<std::shared_ptr<const Entry>>;
  // Each runs with the shard's lock held; the entries they drop go to `dropped`, to be freed
  // after the lock is released.
  static void erase(Shard& shard, Index::iterator it, Dropped& dropped);
  static void promote(Shard& shard, Index::iterator it);
  std::uint64_t evict_to_fit(Shard& shard, Dropped& dropped);

  std::array<Shard, kShards> shards_;
  std::atomic<std::uint64_t> evictions_{0};
  std::atomic<std::uint64_t> expirations_{0};
};

}  // namespace sluice::cache
