#include "config/routes.h"

#include <algorithm>

#include "config/loader.h"
#include "config/policy.h"
#include "config/providers.h"
#include "config/routing.h"
#include "config/scalars.h"

namespace sluice::config {
namespace {

// A rule that tests what a guardrail policy found can only match when the route applies that
// policy to its input (config-wide `apply` or the route's own list).
void check_guardrail_tests(const PolicyNode& node, const Route& route,
                           const GuardrailsConfig& guardrails, const YamlField& at) {
  const auto applied = [&](std::string_view policy) {
    const auto in = [&](const std::vector<std::string>& names) {
      return std::find(names.begin(), names.end(), policy) != names.end();
    };
    const GuardrailPolicy* p = guardrails.find(std::string(policy));
    bool by_group = false;
    for (const auto& [group, names] : guardrails.key_groups) by_group = by_group || in(names);
    return p != nullptr && p->input && (in(guardrails.apply) || in(route.guardrails) || by_group);
  };
  for (const std::vector<Condition>& tests : node.when) {
    for (const Condition& c : tests) {
      if (c.field != Condition::Field::kGuardrails) continue;
      for (const std::string& name : c.values) {
        const std::string_view policy = std::string_view(name).substr(0, name.find('/'));
        if (!applied(policy)) {
          at.fail("a rule at " + node.source + " tests guardrail policy " +
                  in_quotes(std::string(policy)) +
                  ", which this route does not apply to its requests (guardrails.apply, "
                  "guardrails.key_groups or the route's guardrails:)");
        }
      }
    }
  }
  for (const PolicyNode& child : node.children) {
    check_guardrail_tests(child, route, guardrails, at);
  }
}

// `max_output_tokens: N` (capped) or `{ limit: N, action: cap | refuse }`.
OutputCap load_output_cap(const YamlField& field) {
  OutputCap cap;
  if (!field.is_map()) {
    cap.limit = static_cast<std::uint32_t>(field.unsigned_in(1, kMaxU32));
    return cap;
  }
  const YamlMap m = field.map({"limit", "action"});
  cap.limit = static_cast<std::uint32_t>(m.required("limit").unsigned_in(1, kMaxU32));
  if (auto f = m.get("action")) {
    const std::string action = f->text();
    if (action == "cap") {
      cap.action = OutputCap::Action::kCap;
    } else if (action == "refuse") {
      cap.action = OutputCap::Action::kRefuse;
    } else {
      f->fail("expected \"cap\" or \"refuse\", got " + in_quotes(action));
    }
  }
  return cap;
}

// An embeddings route falls back only between targets that return comparable vectors: the
// same model, or the same declared vector_space.
void check_embeddings_policy(const Route& route, const YamlField& at) {
  const Target& first = route.targets.front();
  for (const Target& t : route.targets) {
    const bool same_space = !first.vector_space.empty() && t.vector_space == first.vector_space;
    if (!same_space && t.model != first.model) {
      at.fail("embeddings target " + t.provider + "/" + t.model + " (" + t.source +
              ") returns vectors that are not comparable with " + first.provider + "/" +
              first.model + ": give both the same vector_space to allow it");
    }
  }
}

// False when nothing of `node` is left.
bool prune_node(PolicyNode& node, const std::vector<bool>& keep,
                const std::vector<std::size_t>& renumber) {
  if (node.kind == PolicyNode::Kind::kTarget) {
    if (!keep[node.target]) {
      return false;
    }
    node.target = renumber[node.target];
    return true;
  }
  std::vector<PolicyNode> children;
  std::vector<std::vector<Condition>> when;
  const std::size_t n = node.children.size();
  for (std::size_t i = 0; i < n; ++i) {
    if (prune_node(node.children[i], keep, renumber)) {
      children.push_back(std::move(node.children[i]));
      if (node.kind == PolicyNode::Kind::kConditional && i + 1 < n) {
        when.push_back(std::move(node.when[i]));  // a rule whose branch is gone goes too
      }
    } else if (node.kind == PolicyNode::Kind::kConditional && i + 1 == n) {
      return false;  // no default left: the node cannot answer every request
    }
  }
  node.children = std::move(children);
  node.when = std::move(when);
  if (node.kind == PolicyNode::Kind::kLoadBalance) {
    bool any_weight = false;
    for (const PolicyNode& child : node.children) {
      any_weight = any_weight || child.weight > 0;
    }
    if (!any_weight) {
      for (PolicyNode& child : node.children) {  // only failover targets left: in order
        child.weight = 1;
      }
      node.strategy = PolicyNode::Strategy::kOrdered;
    }
  }
  return !node.children.empty();
}

// Removes the leaves whose `keep` is false (and inner nodes left empty), renumbering targets.
void prune(Route& route, const std::vector<bool>& keep) {
  std::vector<std::size_t> renumber(route.targets.size(), 0);
  std::vector<Target> kept;
  for (std::size_t i = 0; i < route.targets.size(); ++i) {
    if (keep[i]) {
      renumber[i] = kept.size();
      kept.push_back(std::move(route.targets[i]));
    }
  }
  route.targets = std::move(kept);
  prune_node(route.policy, keep, renumber);
  while (route.policy.kind != PolicyNode::Kind::kTarget && route.policy.children.size() == 1) {
    PolicyNode only = std::move(route.policy.children.front());
    route.policy = std::move(only);
  }
}

}  // namespace

std::optional<Route> load_route(const YamlField& field, const RetrySettings& retry_defaults,
                                const CacheSettings& cache_defaults,
                                const GuardrailsConfig& guardrails, LoadState& declared) {
  const YamlMap m =
      field.map({"alias", "kind", "provider", "model", "targets", "policy", "retry", "timeout",
                 "max_output_tokens", "heartbeat_ms", "cache", "guardrails"});
  Route route;
  route.source = field.where();

  const YamlField alias_field = m.required("alias");
  const std::vector<YamlField> alias_items = alias_field.one_or_many();
  if (alias_items.empty()) {
    alias_field.fail("at least one alias is required");
  }
  for (const YamlField& item : alias_items) {
    std::string alias = item.text();
    if (alias.empty() || alias.size() > kMaxNameLength || !is_visible_ascii(alias)) {
      item.fail("alias must be 1.." + std::to_string(kMaxNameLength) +
                " visible characters without spaces");
    }
    declared.declare_alias(item, alias, field);
    route.aliases.push_back(std::move(alias));
  }

  if (auto f = m.get("kind")) {
    const std::string kind = f->text();
    if (kind == "chat") {
      route.kind = RouteKind::kChat;
    } else if (kind == "embeddings") {
      route.kind = RouteKind::kEmbeddings;
    } else {
      f->fail("expected \"chat\" or \"embeddings\", got " + in_quotes(kind));
    }
  }

  // The policy tree: `policy`, a `targets` list (a fallback over them, in order) or the
  // provider/model shorthand (one target).
  const int forms = (m.has("policy") ? 1 : 0) + (m.has("targets") ? 1 : 0) +
                    ((m.has("provider") || m.has("model")) ? 1 : 0);
  if (forms > 1) {
    for (std::string_view name : {"provider", "model", "targets"}) {
      if (auto f = m.get(name)) {
        f->fail("use one of provider/model, targets or policy");
      }
    }
  }
  PolicyReader tree(declared, route.targets);
  if (auto policy = m.get("policy")) {
    route.policy = tree.node(*policy, /*in_balance=*/false);
  } else if (auto targets = m.get("targets")) {
    const std::vector<YamlField> items = targets->items();
    if (items.empty()) {
      targets->fail("at least one target is required");
    }
    route.policy.kind = PolicyNode::Kind::kFallback;
    route.policy.source = targets->where();
    route.policy.on_status.assign(default_fallback_statuses().begin(),
                                  default_fallback_statuses().end());
    for (const YamlField& item : items) {
      route.policy.children.push_back(tree.node(item, false));
    }
    if (route.policy.children.size() == 1) {
      PolicyNode only = std::move(route.policy.children.front());
      route.policy = std::move(only);
    }
  } else {
    if (!m.has("provider") && !m.has("model")) {
      field.fail("missing target: set provider and model, targets, or policy");
    }
    route.policy = tree.target(m, m.self(), false, /*leaf_fields=*/false);
  }
  route.retry = retry_defaults;
  if (auto f = m.get("retry")) {
    route.retry = load_retry(*f, route.retry);
  }
  if (route.kind == RouteKind::kEmbeddings) {
    check_embeddings_policy(route, m.self());
  }
  if (auto f = m.get("max_output_tokens")) {
    if (route.kind == RouteKind::kEmbeddings) {
      f->fail("max_output_tokens applies to chat routes only");
    }
    route.max_output_tokens = load_output_cap(*f);
  }
  if (auto f = m.get("heartbeat_ms")) {
    route.heartbeat = f->millis_in(0, kMaxMillis);
  }
  if (route.kind == RouteKind::kChat) {
    route.cache = cache_defaults;
  }
  if (auto f = m.get("cache")) {
    if (route.kind == RouteKind::kEmbeddings) {
      f->fail("cache applies to chat routes only");
    }
    route.cache = load_route_cache(*f, cache_defaults);
  }
  if (auto f = m.get("guardrails")) {
    route.guardrails = load_route_guardrails(*f, guardrails);
  }
  if (auto policy = m.get("policy")) {
    check_guardrail_tests(route.policy, route, guardrails, *policy);
  }

  // Targets whose provider is disabled (an unset key) leave the tree; the route is skipped
  // only when none is left.
  const std::vector<const DeclaredProvider*>& resolved = tree.providers();
  std::vector<bool> keep(route.targets.size(), true);
  std::vector<std::string> dropped;
  for (std::size_t i = 0; i < route.targets.size(); ++i) {
    const DeclaredProvider* p = resolved[i];
    if (!p->active()) {
      keep[i] = false;
      dropped.push_back(p->id + " disabled (" + describe(p->unmet, " ") + ")");
    }
  }
  const DeclaredProvider* first_active = nullptr;
  for (std::size_t i = 0; i < route.targets.size(); ++i) {
    if (keep[i]) {
      first_active = resolved[i];
      break;
    }
  }
  const bool skipped = first_active == nullptr;
  if (auto f = m.get("timeout")) {
    const Timeouts base = skipped ? Timeouts{} : first_active->timeout;
    route.timeout = load_timeouts(*f, base, !skipped);
  }
  if (skipped) {
    declared.notes.push_back("route " + join(route.aliases) + " skipped: provider " +
                             dropped.front());
    return std::nullopt;
  }
  if (!dropped.empty()) {
    prune(route, keep);
    for (const std::string& d : dropped) {
      declared.notes.push_back("route " + join(route.aliases) + ": a target left out: provider " +
                               d);
    }
  }
  return route;
}

}  // namespace sluice::config
