#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <deque>
#include <optional>
#include <shared_mutex>
#include <span>
#include <unordered_map>
#include <utility>
#include <vector>

#include "cache/key.h"
#include "cache/log_position.h"

namespace sluice::cache {

// The vectors of the semantic cache (docs/cache.md): for each bucket, the embeddings of the
// questions whose answers are stored, each with the key of its entry in the answer store.
//
// A bucket is everything a semantic hit requires to be equal (semantic_bucket in key.h: the
// route, the tenant, the system prompt, tools, parameters and the earlier turns), so a lookup
// only ever compares vectors that may answer each other: another tenant's questions are in
// another bucket, never scanned. Within a bucket the search is a brute-force scan of unit
// vectors (a dot product each), at most kMaxBucketVectors of them: bench/semantic_scan_bench
// gives the cost per lookup (docs/cache.md quotes it); below that bound an approximate index
// would cost more memory and code than the scan costs time.
//
// Bounded in bytes (each vector costs its floats plus kOverheadBytes); beyond it the oldest
// vectors go first. A vector whose entry was evicted or purged from the answer store is dropped
// when a lookup finds it dangling. 16 shards by bucket, each behind a reader-writer lock
// (scans share it; inserts take it alone). Thread-safe.
class SemanticIndex {
 public:
  static constexpr std::size_t kOverheadBytes = 96;
  // The most vectors one bucket holds (the oldest go first): the bound on one lookup's scan.
  static constexpr std::size_t kMaxBucketVectors = 1024;

  explicit SemanticIndex(std::uint64_t capacity_bytes);
  SemanticIndex(const SemanticIndex&) = delete;
  SemanticIndex& operator=(const SemanticIndex&) = delete;

  struct Match {
    Key answer{};
    float similarity = 0;
  };
  // The vector of `bucket` most similar to `query` (unit length, as normalize() leaves it),
  // if its cosine similarity is at least `threshold`. Vectors of another dimension (the
  // embedding model changed) are never compared.
  std::optional<Match> nearest(const Key& bucket, std::span<const float> query,
                               float threshold) const;
  // Adds (or replaces) the vector of the entry `answer` in `bucket`.
  void insert(const Key& bucket, const Key& answer, std::vector<float> unit);
  void erase(const Key& bucket, const Key& answer);
  // How far this index has read the instances' shared log of `bucket` (SharedStore::
  // vectors_after): zero when it has not, or holds none of the bucket's vectors any more.
  LogPosition read_to(const Key& bucket) const;
  // Moves it on to `at` (never back: two workers may read the same records); only a bucket
  // holding vectors keeps a position.
  void set_read_to(const Key& bucket, LogPosition at);
  void clear();
  void set_capacity(std::uint64_t capacity_bytes);

  struct Stats {
    std::uint64_t vectors = 0;
    std::uint64_t bytes = 0;
    std::uint64_t capacity = 0;
    std::uint64_t evictions = 0;
  };
  Stats stats() const;

  // Scales `v` to unit length; false when it cannot be (empty, all zero, not finite).
  static bool normalize(std::vector<float>& v);
  static std::size_t vector_bytes(std::size_t dimensions) {
    return dimensions * sizeof(float) + kOverheadBytes;
  }

 private:
  static constexpr std::size_t kShards = 16;

  struct Item {
    Key answer{};
    std::uint64_t serial = 0;  // the insert that put it here (names in `order` say which)
    std::vector<float> unit;
  };
  // An insert, in order: the vector it put in, while that is still there with this serial.
  struct Inserted {
    Key bucket{};
    Key answer{};
    std::uint64_t serial = 0;
  };
  struct Bucket {
    std::vector<Item> items;
    LogPosition read_to;
  };
  struct Shard {
    mutable std::shared_mutex mu;
    std::unordered_map<Key, Bucket, KeyHash> buckets;
    std::deque<Inserted> order;  // oldest first
    std::uint64_t vectors = 0;
    std::uint64_t bytes = 0;
    std::uint64_t capacity = 0;
    std::uint64_t next_serial = 1;
  };

  Shard& shard_of(const Key& bucket) { return shards_[bucket[31] % kShards]; }
  const Shard& shard_of(const Key& bucket) const { return shards_[bucket[31] % kShards]; }
  // With the shard's lock held: removes `answer` from `bucket` (only if inserted by `serial`,
  // unless 0), true if it was there.
  static bool remove(Shard& shard, const Key& bucket, const Key& answer, std::uint64_t serial = 0);
  static bool live(const Shard& shard, const Inserted& name);
  void evict_to_fit(Shard& shard);

  std::array<Shard, kShards> shards_;
  std::atomic<std::uint64_t> evictions_{0};
};

// A dependency the request path may skip when it is slow or failing (the semantic cache's
// embeddings route): after `failures_to_open` consecutive failures it opens for `open_for`,
// then lets one call through; that call's success closes it, its failure opens it again.
// Lock-free; thread-safe.
class SkipBreaker {
 public:
  using SteadyTime = std::chrono::steady_clock::time_point;

  explicit SkipBreaker(std::uint32_t failures_to_open = 3,
                       std::chrono::milliseconds open_for = std::chrono::seconds(30))
      : failures_to_open_(failures_to_open), open_for_(open_for) {}

  // Whether a call may be made now (closed, or the one probe after the open time).
  bool allow(SteadyTime now);
  // Each true when it changed the state (closed it; opened it from closed): log lines.
  bool success();
  bool failure(SteadyTime now);
  // A call allow() let through was not made after all: the probe slot is free again.
  void abandon() { probing_.store(false, std::memory_order_release); }
  bool open(SteadyTime now) const;

 private:
  static std::int64_t ticks(SteadyTime t) { return t.time_since_epoch().count(); }

  const std::uint32_t failures_to_open_;
  const std::chrono::milliseconds open_for_;
  std::atomic<std::uint32_t> failures_{0};
  std::atomic<std::int64_t> open_until_{0};  // steady ticks; 0: closed
  std::atomic<bool> probing_{false};
};

}  // namespace sluice::cache
