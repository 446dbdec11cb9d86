#include "admin/cache_routes.h"

#include <fmt/format.h>

#include "redis/answer_tier.h"
#include "redis/purge.h"

namespace sluice::admin {

void CacheRoutes::add_to(Router& router) {
  router.add("GET", "/admin/v1/cache", Access::kAdmin,
             [this](const Request& r) { return stats(r); });
  router.add("POST", "/admin/v1/cache/purge", Access::kAdmin,
             [this](const Request& r) { return purge(r); });
}

Response CacheRoutes::stats(const Request& /*request*/) const {
  const cache::MemoryStore::Stats s = store_.stats();
  return Response::json(
      fmt::format(R"({{"entries":{},"bytes":{},"capacity":{},"evictions":{},"expirations":{}}})",
                  s.entries, s.bytes, s.capacity, s.evictions, s.expirations));
}

Response CacheRoutes::purge(const Request& request) {
  std::string alias;
  std::string tenant;
  std::string key_prefix;
  int tenants = 0;
  for (const QueryParam& p : request.params) {
    if (p.name == "route") {
      alias = p.value;
    } else if (p.name == "key_group") {
      tenant = "g:" + p.value;
      ++tenants;
    } else if (p.name == "key") {
      tenant = "k:" + p.value;
      ++tenants;
    } else if (p.name == "key_prefix") {
      key_prefix = p.value;
    } else if (p.name == "shared" && p.value == "true") {
      tenant = "*";
      ++tenants;
    } else {
      return Response::error(400, "invalid_parameter",
                             "unknown parameter " + p.name +
                                 " (expected route, key_group, key, shared=true or key_prefix)");
    }
  }
  if (tenants > 1) {
    return Response::error(400, "invalid_parameter",
                           "give at most one of key_group, key and shared");
  }
  if (tenant == "g:" || tenant == "k:") {
    return Response::error(400, "invalid_parameter", "key_group and key need a value");
  }
  if (key_prefix.size() > 64 ||
      key_prefix.find_first_not_of("0123456789abcdef") != std::string::npos) {
    return Response::error(400, "invalid_parameter",
                           "key_prefix: up to 64 lower-case hex digits (the access log's "
                           "cache_key, or its start)");
  }
  const std::size_t purged = store_.purge(alias, tenant, key_prefix);
  if (shared_ == nullptr) {
    return Response::json(fmt::format(R"({{"purged":{}}})", purged));
  }
  // The shared store's copies too, or every instance would serve them back to this one.
  std::string error;
  std::optional<std::uint64_t> shared_purged = redis::purge_matching(
      *shared_, redis::AnswerTier::purge_pattern(shared_->key_prefix, alias, tenant, key_prefix),
      kSharedPurgeBudget, error);
  if (shared_purged && key_prefix.empty()) {
    // The semantic cache's vectors of those routes and tenants go too: they would only lead
    // to answers that are gone.
    const std::optional<std::uint64_t> logs = redis::purge_matching(
        *shared_,
        redis::AnswerTier::purge_pattern(shared_->key_prefix, alias, tenant, {},
                                         redis::AnswerTier::Records::kVectorLogs),
        kSharedPurgeBudget, error);
    if (!logs) {
      shared_purged.reset();
    }
  }
  if (!shared_purged) {
    return Response::error(503, "shared_store_unavailable",
                           fmt::format("purged {} entries here, but the shared store (redis) "
                                       "could not be purged: {}; retry",
                                       purged, error));
  }
  return Response::json(
      fmt::format(R"({{"purged":{},"shared_purged":{}}})", purged, *shared_purged));
}

}  // namespace sluice::admin
