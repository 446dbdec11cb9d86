#pragma once

#include <cstddef>
#include <vector>

#include "config/config.h"

namespace sluice::config {

class YamlField;
class YamlMap;
struct DeclaredProvider;
struct LoadState;

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
