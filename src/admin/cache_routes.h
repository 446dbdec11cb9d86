#pragma once

#include "admin/router.h"
#include "cache/memory_store.h"

namespace sluice::admin {

// The answer cache on the admin listener (docs/cache.md):
//   GET  /admin/v1/cache                        entries, bytes, capacity, evictions, expirations
//   POST /admin/v1/cache/purge[?route=ALIAS][&key_group=G | &key=KEY_ID | &shared=true]
// A purge drops the entries of a route (its first alias), of a tenant, or both; with neither,
// every entry. Answers {"purged": N}. 400 for an unknown parameter or two tenants at once.
class CacheRoutes {
 public:
  explicit CacheRoutes(cache::MemoryStore& store) : store_(store) {}

  // Adds the routes to `router`; this object must outlive the router's use of them.
  void add_to(Router& router);

  Response stats(const Request& request) const;
  Response purge(const Request& request);

 private:
  cache::MemoryStore& store_;
};

}  // namespace sluice::admin
