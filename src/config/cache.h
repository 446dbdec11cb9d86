#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "config/state.h"
#include "config/values.h"

namespace sluice::config {

class YamlField;

// The semantic cache of a route (docs/cache.md#semantic-cache): a question worded differently
// from one already answered gets that answer when their embeddings are close enough and
// everything else about the two requests is equal.
struct SemanticSettings {
  // The embeddings route (by alias) the caller's question is embedded through.
  std::string embeddings;
  // The cosine similarity at least needed for a hit. High on purpose: a wrong answer served
  // as a right one costs more than a paid call.
  double threshold = 0.97;
  // Conversations with more user turns than this are not looked up (the later the turn, the
  // more its meaning depends on what came before).
  std::uint32_t max_turns = 1;
  // An embedding that takes longer is given up (the call goes on uncached and the embedding
  // call is cancelled); a route that keeps failing or timing out is skipped for a while.
  Millis timeout{1000};
  // Longer questions are not embedded.
  std::uint64_t max_text_bytes = 16 * 1024;
  // Sent as the embeddings request's `dimensions` (OpenAI's text-embedding-3 models shorten
  // their vectors to it): fewer dimensions, less memory per entry. 0: the model's own.
  std::uint32_t dimensions = 0;
  std::string source;  // "<file>:<line>" of the `semantic:` field, for messages
};

// How one route caches its answers (docs/cache.md). The config-wide `cache:` gives every
// route's default; a route's `cache:` overrides it field by field (`cache: true` / `false`
// only switches it).
struct CacheSettings {
  // Whose answers an entry may serve.
  enum class Scope : std::uint8_t {
    kKeyGroup,  // callers of the same key group (the key itself when it has none): the default
    kKey,       // the same gateway key only
    kShared,    // every caller of the route, across tenants: only for routes whose answers are
                // not private (a public FAQ model), and only when the route says so
  };

  bool enabled = false;
  Millis ttl{300'000};
  // Each entry lives up to this share of `ttl` less (drawn per entry), so entries written in
  // one burst do not all expire in the same second.
  double ttl_jitter = 0.1;
  // After `ttl`, an entry is still served for this long (x-sluice-cache: stale) while one
  // request refreshes it from the origin. 0 = an expired entry is a miss.
  Millis stale_while_revalidate{0};
  // Larger answers are not kept (a few long answers would evict many short ones).
  std::uint64_t max_entry_bytes = 1024 * 1024;
  Scope scope = Scope::kKeyGroup;
  // Request headers whose values are part of the key (lower case), for answers that depend on
  // them (a feature flag forwarded upstream, a locale).
  std::vector<std::string> vary_headers;
  // Answers that stopped at the output limit (finish reason length) are kept too. Off: a
  // truncated answer is served once, to the caller who asked for that limit.
  bool store_truncated = false;
  // A hit and a follower are billed this percent of what the answer cost when it was paid for
  // (0: free). Their usage records carry the charge (budgets count it) and save the rest. An
  // idempotent replay is never billed: it is the same request sent again.
  std::uint8_t bill_percent = 0;
  // With `cache.redis`: a miss while another instance makes the same call waits this long for
  // that call's answer to reach Redis before making its own (the first instance's claim lasts
  // as long); 0 = instances never wait for each other. A failed call's claim goes with it, and
  // its waiters make their own calls at once.
  Millis shared_flight_wait{30'000};
  // Off unless the route names an embeddings route.
  std::optional<SemanticSettings> semantic;
};

// The config-wide `cache:`: the stores and every route's default settings.
struct CacheConfig {
  // Memory the in-process store may hold (entries and their keys); the least valuable entries
  // are evicted beyond it.
  std::uint64_t memory_bytes = 64 * 1024 * 1024;
  // A Redis shared by every instance, behind the in-process store: a local miss asks it (within
  // its timeout_ms; a Redis that does not answer is a miss), and every answer stored goes to
  // both. Read at start; a reload does not change it.
  std::optional<StateSettings> redis;
  // Records larger than this are deflated in Redis.
  std::uint64_t compress_above_bytes = 4096;
  // Memory the semantic cache's vectors may hold (cache/semantic_index.h); the oldest go
  // beyond it.
  std::uint64_t semantic_memory_bytes = 64 * 1024 * 1024;
  CacheSettings defaults;
};

// `cache:` at the top of the config. Throws ConfigError.
CacheConfig load_cache(const YamlField& field);
// A route's `cache:` over `defaults`: a boolean, or a map of the same fields (backend ones
// excluded). Throws ConfigError.
CacheSettings load_route_cache(const YamlField& field, const CacheSettings& defaults);

}  // namespace sluice::config
