#include "cache/memory_store.h"

#include <algorithm>

namespace sluice::cache {
namespace {

// The protected segment's share of a shard: what is asked again keeps most of the room, and
// probation keeps enough for a new entry to prove itself.
constexpr std::uint64_t kProtectedPercent = 80;

}  // namespace

MemoryStore::MemoryStore(std::uint64_t capacity_bytes) { set_capacity(capacity_bytes); }

void MemoryStore::erase(Shard& shard, Index::iterator it, Dropped& dropped) {
  Node& node = it->second;
  if (node.protected_segment) {
    shard.protected_bytes -= node.entry->bytes;
    shard.protect.erase(node.position);
  } else {
    shard.probation_bytes -= node.entry->bytes;
    shard.probation.erase(node.position);
  }
  dropped.push_back(std::move(node.entry));
  shard.index.erase(it);
}

void MemoryStore::promote(Shard& shard, Index::iterator it) {
  Node& node = it->second;
  if (node.protected_segment) {
    shard.protect.splice(shard.protect.begin(), shard.protect, node.position);
    return;
  }
  shard.protect.splice(shard.protect.begin(), shard.probation, node.position);
  node.protected_segment = true;
  shard.probation_bytes -= node.entry->bytes;
  shard.protected_bytes += node.entry->bytes;
  // Demote protected's least recent entries to probation's front: they get one more chance
  // before eviction.
  const std::uint64_t limit = shard.capacity * kProtectedPercent / 100;
  while (shard.protected_bytes > limit && shard.protect.size() > 1) {
    const auto last = std::prev(shard.protect.end());
    Node& demoted = shard.index.find(*last)->second;
    shard.probation.splice(shard.probation.begin(), shard.protect, last);
    demoted.protected_segment = false;
    shard.protected_bytes -= demoted.entry->bytes;
    shard.probation_bytes += demoted.entry->bytes;
  }
}

std::uint64_t MemoryStore::evict_to_fit(Shard& shard, Dropped& dropped) {
  std::uint64_t evicted = 0;
  while (shard.probation_bytes + shard.protected_bytes > shard.capacity) {
    Order& from = shard.probation.empty() ? shard.protect : shard.probation;
    erase(shard, shard.index.find(from.back()), dropped);
    ++evicted;
  }
  return evicted;
}

std::optional<MemoryStore::Found> MemoryStore::find(const Key& key, SteadyTime now,
                                                    std::chrono::milliseconds refresh_window) {
  Shard& shard = shard_of(key);
  Dropped dropped;
  std::optional<Found> found;
  {
    std::lock_guard lock(shard.mu);
    const auto it = shard.index.find(key);
    if (it == shard.index.end()) {
      return std::nullopt;
    }
    Node& node = it->second;
    if (now >= node.entry->stale_until) {
      erase(shard, it, dropped);
      expirations_.fetch_add(1, std::memory_order_relaxed);
    } else {
      found.emplace();
      found->entry = node.entry;
      if (now >= node.entry->fresh_until) {
        found->freshness = Freshness::kStale;
        if (now >= node.refresh_claimed_until) {
          node.refresh_claimed_until = now + refresh_window;
          found->refresh = true;
        }
      }
      promote(shard, it);
    }
  }
  return found;
}

bool MemoryStore::put(const Key& key, std::shared_ptr<const Entry> entry) {
  Shard& shard = shard_of(key);
  Dropped dropped;
  std::uint64_t evicted = 0;
  {
    std::lock_guard lock(shard.mu);
    if (entry->bytes > shard.capacity) {
      return false;
    }
    const auto it = shard.index.find(key);
    if (it != shard.index.end()) {
      erase(shard, it, dropped);
    }
    const auto placed = shard.index.try_emplace(key).first;
    Node& node = placed->second;
    shard.probation_bytes += entry->bytes;
    node.entry = std::move(entry);
    shard.probation.push_front(key);
    node.position = shard.probation.begin();
    evicted = evict_to_fit(shard, dropped);
  }
  evictions_.fetch_add(evicted, std::memory_order_relaxed);
  return true;
}

std::size_t MemoryStore::purge(std::string_view alias, std::string_view tenant,
                               std::string_view key_prefix) {
  std::size_t purged = 0;
  for (Shard& shard : shards_) {
    Dropped dropped;
    std::lock_guard lock(shard.mu);
    for (auto it = shard.index.begin(); it != shard.index.end();) {
      const Entry& e = *it->second.entry;
      const auto next = std::next(it);
      if ((alias.empty() || e.alias == alias) && (tenant.empty() || e.tenant == tenant) &&
          (key_prefix.empty() || to_hex(it->first).starts_with(key_prefix))) {
        erase(shard, it, dropped);
        ++purged;
      }
      it = next;
    }
  }
  return purged;
}

void MemoryStore::set_capacity(std::uint64_t capacity_bytes) {
  for (Shard& shard : shards_) {
    Dropped dropped;
    std::uint64_t evicted = 0;
    {
      std::lock_guard lock(shard.mu);
      shard.capacity = capacity_bytes / kShards;
      evicted = evict_to_fit(shard, dropped);
    }
    evictions_.fetch_add(evicted, std::memory_order_relaxed);
  }
}

MemoryStore::Stats MemoryStore::stats() const {
  Stats stats;
  for (const Shard& shard : shards_) {
    std::lock_guard lock(shard.mu);
    stats.entries += shard.index.size();
    stats.bytes += shard.probation_bytes + shard.protected_bytes;
    stats.capacity += shard.capacity;
  }
  stats.evictions = evictions_.load(std::memory_order_relaxed);
  stats.expirations = expirations_.load(std::memory_order_relaxed);
  return stats;
}

}  // namespace sluice::cache
