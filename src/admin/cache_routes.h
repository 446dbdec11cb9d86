#pragma once

#include <chrono>

#include "admin/router.h"
#include "cache/memory_store.h"
#include "config/state.h"

namespace sluice::admin {

// The answer cache on the admin listener (docs/cache.md):
//   GET  /admin/v1/cache                        entries, bytes, capacity, evictions, expirations
//   POST /admin/v1/cache/purge[?route=ALIAS][&key_group=G | &key=KEY_ID | &shared=true]
//                             [&key_prefix=HEX]
// A purge drops the entries of a route (its first alias), of a tenant, or both; with neither,
// every entry. Answers {"purged": N}, and with cache.redis also {"shared_purged": M} (503 when
// that Redis cannot be purged). 400 for an unknown parameter or two tenants at once.
class CacheRoutes {
 public:
  // `shared`: the Redis of cache.redis, whose copies a purge drops too (null: none).
  explicit CacheRoutes(cache::MemoryStore& store, const config::StateSettings* shared = nullptr)
      : store_(store), shared_(shared) {}

  // Adds the routes to `router`; this object must outlive the router's use of them.
  void add_to(Router& router);

  Response stats(const Request& request) const;
  Response purge(const Request& request);

 private:
  // A purge of the shared store scans it: bounded, on the admin thread.
  static constexpr std::chrono::milliseconds kSharedPurgeBudget{10'000};

  cache::MemoryStore& store_;
  const config::StateSettings* shared_;
};

}  // namespace sluice::admin
