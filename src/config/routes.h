#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "config/cache.h"
#include "config/guardrails.h"
#include "config/policy.h"
#include "config/routing.h"
#include "config/values.h"

namespace sluice::config {

class YamlField;
struct LoadState;

enum class RouteKind { kChat, kEmbeddings };

// A route's ceiling on the output a request may ask for (max_tokens, max_completion_tokens,
// max_output_tokens, maxOutputTokens, whichever the caller's protocol uses).
struct OutputCap {
  enum class Action : std::uint8_t {
    kCap,     // a request asking for more, or for no limit, is sent with the limit
    kRefuse,  // such a request is refused (400 naming the field and the limit)
  };
  std::uint32_t limit = 0;  // 0 = no cap
  Action action = Action::kCap;
};

struct Route {
  std::vector<std::string> aliases;  // model names callers use
  RouteKind kind = RouteKind::kChat;
  std::vector<Target> targets;  // every leaf of `policy`, in the order written
  PolicyNode policy;            // a single target: one kTarget leaf
  RetrySettings retry;
  std::optional<Timeouts> timeout;  // overrides the provider's
  OutputCap max_output_tokens;
  // Overrides server.heartbeat_ms for this route's streams.
  std::optional<Millis> heartbeat;
  // The answer cache (config-wide defaults merged with the route's own `cache:`); chat only.
  CacheSettings cache;
  // The guardrail policies the route applies of its own, after the config-wide `apply`.
  std::vector<std::string> guardrails;
  std::string source;
};

// One `routes[]` entry: its aliases declared in `declared` (unique across routes), its policy
// tree (`policy`, a `targets` list or the provider/model shorthand) over declared providers,
// its retry settings over `retry_defaults`, its cache settings over `cache_defaults`. Targets whose
// provider is skipped leave the tree (a note each); nullopt when none is left (the route is
// skipped, a note says why). Throws ConfigError.
std::optional<Route> load_route(const YamlField& field, const RetrySettings& retry_defaults,
                                const CacheSettings& cache_defaults,
                                const GuardrailsConfig& guardrails, LoadState& declared);

}  // namespace sluice::config
