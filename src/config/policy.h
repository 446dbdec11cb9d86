#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "config/providers.h"

namespace sluice::config {

class YamlField;
class YamlMap;
struct DeclaredProvider;
struct LoadState;

// One concrete upstream a route may send to.
struct Target {
  std::string provider;  // Provider::id
  std::string model;     // model name sent upstream
  // Embeddings only: targets with the same non-empty vector space return comparable vectors,
  // so one may stand in for another. An embeddings route fails over only between them.
  std::string vector_space;
  std::optional<Timeouts> timeout;  // overrides the route's and the provider's
  std::string source;
};

// One test a `conditional` node makes on a request (docs/routing.md "conditional").
struct Condition {
  enum class Field : std::uint8_t {
    kKey,         // the gateway key's name
    kKeyGroup,    // the gateway key's group ("" when it has none)
    kHeader,      // a request header (`header`, lower case)
    kStream,      // whether the caller asked for a stream
    kMaxTokens,   // the request's output token limit (absent: no numeric test matches)
    kGuardrails,  // what the input guardrails found: "policy" or "policy/detector"
  };
  enum class Op : std::uint8_t { kEq, kIn, kGt, kGte, kLt, kLte, kExists };
  Field field = Field::kKey;
  std::string header;
  Op op = Op::kEq;
  std::vector<std::string> values;  // kEq (one), kIn
  std::uint64_t number = 0;         // kGt, kGte, kLt, kLte
  bool flag = true;                 // kStream: the value to match; kExists: present or absent
};

// A node of a route's policy tree (docs/routing.md). Leaves are targets; inner nodes decide
// the order in which their children are tried.
struct PolicyNode {
  enum class Kind : std::uint8_t {
    kTarget,       // one target (Route::targets[target])
    kFallback,     // children in order; a failure moves on only when `on_status` allows
    kLoadBalance,  // children ordered by `strategy` per request
    kConditional,  // the first child whose conditions all match; the last child is the default
  };
  enum class Strategy : std::uint8_t {
    kWeighted,   // random, proportional to weight; weight 0 = failover only
    kOrdered,    // in the order written
    kLeastBusy,  // fewest requests in flight first
    kLatency,    // power of two choices on the EWMA of time to first byte
    // The same prompt prefix to the same child (rendezvous hashing on the request's affinity
    // key, weighted), unless that child carries more than its bounded share of the load:
    // provider prompt caches stay warm, and a hot prefix cannot pile onto one target.
    kPrefixAffinity,
  };
  Kind kind = Kind::kTarget;
  std::size_t target = 0;                   // kTarget
  std::uint32_t weight = 1;                 // this node's share inside a kLoadBalance parent
  Strategy strategy = Strategy::kWeighted;  // kLoadBalance
  // kFallback: the upstream statuses that move on to the next child (failures without a
  // status, such as connect errors and timeouts, always do). Never 400/401/403/404/413/422.
  std::vector<int> on_status;
  // kConditional: per child but the last (the default), the tests that must all pass.
  std::vector<std::vector<Condition>> when;
  std::vector<PolicyNode> children;
  std::string source;  // "file.yaml:12"
};

// Statuses a fallback moves on for when its `on_status` is not given.
std::span<const int> default_fallback_statuses();

// Reads one route's policy tree (docs/routing.md): its leaves go to `targets`, which
// PolicyNode::target indexes, each with the declared provider it names (providers()), checked
// against the providers the file declares. One reader per route; borrows both arguments.
// Every method throws ConfigError.
class PolicyReader {
 public:
  PolicyReader(const LoadState& declared, std::vector<Target>& targets)
      : declared_(declared), targets_(targets) {}

  // A node: a target (provider, model), fallback, loadbalance or conditional. `in_balance`:
  // the node is a child of a loadbalance, where `weight` applies.
  PolicyNode node(const YamlField& field, bool in_balance, std::size_t depth = 0);
  // The target whose fields are in `m` (the node at `at`). `leaf_fields`: weight, vector_space
  // and timeout belong to the target (false for the route-level provider/model shorthand,
  // whose timeout is the route's).
  PolicyNode target(const YamlMap& m, const YamlField& at, bool in_balance,
                    bool leaf_fields = true);

  // Per entry of `targets`, the provider it names.
  const std::vector<const DeclaredProvider*>& providers() const { return providers_; }

 private:
  void conditional(const YamlField& field, PolicyNode& node, std::size_t depth);

  const LoadState& declared_;
  std::vector<Target>& targets_;
  std::vector<const DeclaredProvider*> providers_;
};

}  // namespace sluice::config
