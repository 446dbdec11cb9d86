#include "cache/semantic_index.h"

#include <algorithm>
#include <cmath>
#include <mutex>

namespace sluice::cache {
namespace {

// GCC's vector extension, four floats a lane group (SSE2, the x86-64 baseline; NEON on
// arm64), four groups in flight: a plain loop is not vectorised at all, because a float sum
// may not be reassociated without -ffast-math. 2.3x the plain loop at 1,000 x 1,536 (bench/
// semantic_scan_bench).
using Lanes = float __attribute__((vector_size(16)));

float dot(std::span<const float> a, std::span<const float> b) {
  Lanes s0{}, s1{}, s2{}, s3{};
  std::size_t i = 0;
  const std::size_t n = a.size();
  for (; i + 16 <= n; i += 16) {
    Lanes x[4], y[4];
    std::memcpy(x, a.data() + i, sizeof x);  // unaligned loads, folded by the compiler
    std::memcpy(y, b.data() + i, sizeof y);
    s0 += x[0] * y[0];
    s1 += x[1] * y[1];
    s2 += x[2] * y[2];
    s3 += x[3] * y[3];
  }
  const Lanes sum = (s0 + s1) + (s2 + s3);
  float total = (sum[0] + sum[1]) + (sum[2] + sum[3]);
  for (; i < n; ++i) {
    total += a[i] * b[i];
  }
  return total;
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
  for (const Item& item : it->second.items) {
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
  std::vector<Item>& items = shard.buckets[bucket].items;
  if (items.size() >= kMaxBucketVectors) {
    // A full bucket drops its oldest, so no lookup scans more than kMaxBucketVectors.
    auto oldest = std::min_element(items.begin(), items.end(), [](const Item& x, const Item& y) {
      return x.serial < y.serial;
    });
    const Key dropped = oldest->answer;
    remove(shard, bucket, dropped);
    evictions_.fetch_add(1, std::memory_order_relaxed);
  }
  const std::uint64_t serial = shard.next_serial++;
  std::vector<Item>& kept = shard.buckets[bucket].items;  // remove() may have erased it
  kept.push_back(Item{answer, serial, std::move(unit)});
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

LogPosition SemanticIndex::read_to(const Key& bucket) const {
  const Shard& shard = shard_of(bucket);
  std::shared_lock lock(shard.mu);
  auto it = shard.buckets.find(bucket);
  return it == shard.buckets.end() ? LogPosition{} : it->second.read_to;
}

void SemanticIndex::set_read_to(const Key& bucket, LogPosition at) {
  Shard& shard = shard_of(bucket);
  std::unique_lock lock(shard.mu);
  auto it = shard.buckets.find(bucket);
  if (it != shard.buckets.end() && it->second.read_to < at) {
    it->second.read_to = at;
  }
}

bool SemanticIndex::remove(Shard& shard, const Key& bucket, const Key& answer,
                           std::uint64_t serial) {
  auto it = shard.buckets.find(bucket);
  if (it == shard.buckets.end()) {
    return false;
  }
  std::vector<Item>& items = it->second.items;
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
  const std::vector<Item>& items = it->second.items;
  return std::any_of(items.begin(), items.end(), [&](const Item& item) {
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
