#include "cache/semantic_index.h"

#include <algorithm>
#include <cmath>
#include <mutex>

namespace sluice::cache {
namespace {

// Four accumulators: the additions are independent, so the compiler can keep several in
// flight (and vectorise) without reassociating a single sum, which it may not do by itself.
float dot(std::span<const float> a, std::span<const float> b) {
  float s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  std::size_t i = 0;
  const std::size_t n = a.size();
  for (; i + 4 <= n; i += 4) {
    s0 += a[i] * b[i];
    s1 += a[i + 1] * b[i + 1];
    s2 += a[i + 2] * b[i + 2];
    s3 += a[i + 3] * b[i + 3];
  }
  for (; i < n; ++i) {
    s0 += a[i] * b[i];
  }
  return (s0 + s1) + (s2 + s3);
}

}  // namespace

SemanticIndex::SemanticIndex(std::uint64_t capacity_bytes) { set_capacity(capacity_bytes); }

bool SemanticIndex::normalize(std::vector<float>& v) {
  double sum = 0;
  for (float x : v) {
    if (!std::isfinite(x)) {
      return false;
    }
    sum += static_cast<double>(x) * x;
  }
  if (v.empty() || !(sum > 0)) {
    return false;
  }
  const double scale = 1.0 / std::sqrt(sum);
  for (float& x : v) {
    x = static_cast<float>(x * scale);
  }
  return true;
}

std::optional<SemanticIndex::Match> SemanticIndex::nearest(const Key& bucket,
                                                           std::span<const float> query,
                                                           float threshold) const {
  const Shard& shard = shard_of(bucket);
  std::shared_lock lock(shard.mu);
  auto it = shard.buckets.find(bucket);
  if (it == shard.buckets.end()) {
    return std::nullopt;
  }
  std::optional<Match> best;
  for (const Item& item : it->second) {
    if (item.unit.size() != query.size()) {
      continue;
    }
    const float similarity = dot(item.unit, query);
    if (similarity >= threshold && (!best || similarity > best->similarity)) {
      best = Match{item.answer, similarity};
    }
  }
  return best;
}

void SemanticIndex::insert(const Key& bucket, const Key& answer, std::vector<float> unit) {
  Shard& shard = shard_of(bucket);
  const std::size_t bytes = vector_bytes(unit.size());
  std::unique_lock lock(shard.mu);
  if (bytes > shard.capacity) {
    return;
  }
  remove(shard, bucket, answer);
  const std::uint64_t serial = shard.next_serial++;
  shard.buckets[bucket].push_back(Item{answer, serial, std::move(unit)});
  shard.order.push_back(Inserted{bucket, answer, serial});
  shard.bytes += bytes;
  ++shard.vectors;
  evict_to_fit(shard);
}

void SemanticIndex::erase(const Key& bucket, const Key& answer) {
  Shard& shard = shard_of(bucket);
  std::unique_lock lock(shard.mu);
  remove(shard, bucket, answer);
}

bool SemanticIndex::remove(Shard& shard, const Key& bucket, const Key& answer,
                           std::uint64_t serial) {
  auto it = shard.buckets.find(bucket);
  if (it == shard.buckets.end()) {
    return false;
  }
  std::vector<Item>& items = it->second;
  auto found = std::find_if(items.begin(), items.end(), [&](const Item& item) {
    return item.answer == answer && (serial == 0 || item.serial == serial);
  });
  if (found == items.end()) {
    return false;
  }
  shard.bytes -= vector_bytes(found->unit.size());
  --shard.vectors;
  *found = std::move(items.back());
  items.pop_back();
  if (items.empty()) {
    shard.buckets.erase(it);
  }
  return true;
}

bool SemanticIndex::live(const Shard& shard, const Inserted& name) {
  auto it = shard.buckets.find(name.bucket);
  if (it == shard.buckets.end()) {
    return false;
  }
  return std::any_of(it->second.begin(), it->second.end(), [&](const Item& item) {
    return item.answer == name.answer && item.serial == name.serial;
  });
}

// The order list may name vectors already replaced or erased (serials tell): those are
// skipped when eviction reaches them, and once they outnumber the live ones the list is
// compacted, so it holds at most about twice as many names as vectors.
void SemanticIndex::evict_to_fit(Shard& shard) {
  while (shard.bytes > shard.capacity && !shard.order.empty()) {
    const Inserted oldest = shard.order.front();
    shard.order.pop_front();
    if (remove(shard, oldest.bucket, oldest.answer, oldest.serial)) {
      evictions_.fetch_add(1, std::memory_order_relaxed);
    }
  }
  if (shard.order.size() > 2 * shard.vectors + 16) {
    std::deque<Inserted> kept;
    for (const Inserted& name : shard.order) {
      if (live(shard, name)) {
        kept.push_back(name);
      }
    }
    shard.order.swap(kept);
  }
}

void SemanticIndex::clear() {
  for (Shard& shard : shards_) {
    std::unique_lock lock(shard.mu);
    shard.buckets.clear();
    shard.order.clear();
    shard.vectors = 0;
    shard.bytes = 0;
  }
}

void SemanticIndex::set_capacity(std::uint64_t capacity_bytes) {
  for (Shard& shard : shards_) {
    std::unique_lock lock(shard.mu);
    shard.capacity = capacity_bytes / kShards;
    evict_to_fit(shard);
  }
}

SemanticIndex::Stats SemanticIndex::stats() const {
  Stats s;
  for (const Shard& shard : shards_) {
    std::shared_lock lock(shard.mu);
    s.vectors += shard.vectors;
    s.bytes += shard.bytes;
    s.capacity += shard.capacity;
  }
  s.evictions = evictions_.load(std::memory_order_relaxed);
  return s;
}

bool SkipBreaker::allow(SteadyTime now) {
  const std::int64_t until = open_until_.load(std::memory_order_acquire);
  if (until == 0) {
    return true;
  }
  if (ticks(now) < until) {
    return false;
  }
  bool expected = false;  // open time over: one probe at a time
  return probing_.compare_exchange_strong(expected, true, std::memory_order_acq_rel);
}

bool SkipBreaker::success() {
  failures_.store(0, std::memory_order_relaxed);
  const bool was_open = open_until_.exchange(0, std::memory_order_acq_rel) != 0;
  probing_.store(false, std::memory_order_release);
  return was_open;
}

bool SkipBreaker::failure(SteadyTime now) {
  const std::uint32_t failures = failures_.fetch_add(1, std::memory_order_acq_rel) + 1;
  bool opened = false;
  if (failures >= failures_to_open_ || open_until_.load(std::memory_order_acquire) != 0) {
    opened = open_until_.exchange(ticks(now + open_for_), std::memory_order_acq_rel) == 0;
  }
  probing_.store(false, std::memory_order_release);
  return opened;
}

bool SkipBreaker::open(SteadyTime now) const {
  return ticks(now) < open_until_.load(std::memory_order_acquire);
}

}  // namespace sluice::cache
