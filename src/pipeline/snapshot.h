#pragma once

#include <array>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "config/config.h"
#include "core/result.h"
#include "guardrails/policy.h"
#include "metering/pricing.h"
#include "pipeline/reasoning_seal.h"
#include "protocol/ingress.h"
#include "providers/adapter.h"
#include "routing/health.h"
#include "routing/plan.h"

namespace sluice::pipeline {

// A provider ready to serve: its config and its adapter.
struct ProviderRuntime {
  const config::Provider* config = nullptr;
  std::unique_ptr<providers::ProviderAdapter> adapter;
};

// One target of a route, ready to send to.
struct TargetRuntime {
  protocol::Operation operation = protocol::Operation::kChat;
  const ProviderRuntime* provider = nullptr;
  std::string model;
  config::Timeouts timeouts;  // target over route over provider
  routing::TargetHealth* health = nullptr;
  std::string_view path;  // in the policy tree (CompiledPolicy::paths)
};

struct RouteRuntime {
  const config::Route* config = nullptr;
  std::size_t index = 0;  // in Snapshot::routes()
  protocol::Operation operation = protocol::Operation::kChat;
  std::vector<TargetRuntime> targets;  // per config::Route::targets entry
  routing::CompiledPolicy policy;
  // The guardrail policies its requests go through (the config-wide `apply`, then its own),
  // those that look at what is sent and those that look at the answers.
  guardrails::Policies input_guardrails;
  guardrails::Policies output_guardrails;
  // For each key group with policies of its own (`guardrails.key_groups`): the route's, then
  // the group's. A request whose key is in none of them gets the route's.
  struct GroupGuardrails {
    std::string group;
    guardrails::Policies input;
    guardrails::Policies output;
  };
  std::vector<GroupGuardrails> group_guardrails;

  const guardrails::Policies& input_guardrails_for(std::string_view key_group) const;
  const guardrails::Policies& output_guardrails_for(std::string_view key_group) const;
  // Every set its requests may go through, the route's and each key group's (for a filter's
  // factory: whether it is needed, what to prepare).
  std::vector<const guardrails::Policies*> guardrail_sets(bool input) const;

 private:
  const GroupGuardrails* group(std::string_view key_group) const;
};

// The immutable, compiled form of one config version that the data plane serves from. Built
// off the request path (start-up, reload); shared by all workers; never mutated. A request pins
// the snapshot it started on (RequestContext::snapshot) until it ends.
class Snapshot {
 public:
  // Throws nothing; fails on what config validation cannot see (an unreadable CA file, a route
  // whose provider cannot serve its kind, a metering.prices catalogue that does not load).
  // `health` carries target health (breakers, budgets, latency) over from the version being
  // replaced; null starts afresh.
  static Result<std::shared_ptr<const Snapshot>> build(
      std::shared_ptr<const config::Config> cfg,
      std::shared_ptr<routing::HealthRegistry> health = nullptr);

  const config::Config& config() const { return *config_; }
  std::uint64_t version() const { return config_->version; }

  const RouteRuntime* find_route(std::string_view alias) const;
  // The key whose secret is `presented`, or null. Compares SHA-256 digests in constant time.
  const config::Key* authenticate(std::string_view presented) const;
  // The key whose SHA-256 (lower-case hex) is `digest`, or null; constant-time compare.
  const config::Key* find_key(std::string_view digest) const;
  static bool key_allows(const config::Key* key, std::string_view alias);
  // Aliases `key` may call, in config order (`key` null when auth is off).
  std::vector<std::string_view> aliases_for(const config::Key* key) const;
  // The alias string owned by the snapshot that equals `alias`, for views that outlive the body.
  std::string_view stored_alias(std::string_view alias) const;

  const std::vector<std::unique_ptr<ProviderRuntime>>& providers() const { return providers_; }
  const std::vector<std::unique_ptr<RouteRuntime>>& routes() const { return routes_; }
  const std::shared_ptr<routing::HealthRegistry>& health() const { return health_; }
  // The price catalogue of this version: metering.prices, or the one built into the binary.
  // Requests charge with the book of the snapshot they pinned.
  const metering::PriceBook& price_book() const { return *price_book_; }
  // Seals the reasoning state translated answers hand callers (server.reasoning_seal_key).
  const ReasoningSeal& reasoning_seal() const { return *reasoning_seal_; }

 private:
  std::shared_ptr<const config::Config> config_;
  std::shared_ptr<routing::HealthRegistry> health_;
  std::shared_ptr<const metering::PriceBook> price_book_;
  std::unique_ptr<const ReasoningSeal> reasoning_seal_;
  std::vector<std::unique_ptr<ProviderRuntime>> providers_;
  std::vector<std::unique_ptr<RouteRuntime>> routes_;
  std::unordered_map<std::string_view, const RouteRuntime*> by_alias_;
  std::unordered_map<std::string_view, const config::Key*> by_hash_;
};

// Lower-case hex SHA-256 of `text`, without heap allocation (a per-thread digest context).
// All zero bytes if OpenSSL fails, which matches no stored hash.
std::array<char, 64> sha256_hex(std::string_view text);

}  // namespace sluice::pipeline
