#include "config/policy.h"

#include <algorithm>
#include <cctype>
#include <limits>

#include "config/loader.h"
#include "config/providers.h"
#include "config/scalars.h"

namespace sluice::config {
namespace {

constexpr std::size_t kMaxPolicyDepth = 8;
constexpr std::size_t kMaxTargets = 64;

std::string model_name(const YamlField& field) {
  std::string model = field.text();
  if (model.empty() || model.size() > kMaxNameLength || !is_visible_ascii(model)) {
    field.fail("model must be 1.." + std::to_string(kMaxNameLength) +
               " visible characters without spaces");
  }
  return model;
}

std::uint32_t load_weight(const YamlMap& m, bool in_balance) {
  auto f = m.get("weight");
  if (!f) {
    return 1;
  }
  if (!in_balance) {
    f->fail("weight applies only inside loadbalance");
  }
  return static_cast<std::uint32_t>(f->unsigned_in(0, 1'000'000));
}

// A scalar (equals), or one of {eq: v}, {in: [v...]}, {exists: bool}; numeric fields take
// {gt|gte|lt|lte|eq: n}.
void load_matcher(const YamlField& field, Condition& c, bool numeric) {
  if (!field.is_map()) {
    c.op = Condition::Op::kEq;
    if (numeric) {
      c.number = field.unsigned_in(0, std::numeric_limits<std::uint32_t>::max());
    } else {
      c.values.push_back(field.text());
    }
    return;
  }
  const YamlMap m =
      numeric ? field.map({"eq", "gt", "gte", "lt", "lte"}) : field.map({"eq", "in", "exists"});
  int ops = 0;
  for (std::string_view op : {"eq", "in", "exists", "gt", "gte", "lt", "lte"}) {
    ops += m.has(op) ? 1 : 0;
  }
  if (ops != 1) {
    field.fail(numeric ? "expected exactly one of eq, gt, gte, lt, lte"
                       : "expected exactly one of eq, in, exists");
  }
  if (numeric) {
    static constexpr std::pair<std::string_view, Condition::Op> kOps[] = {
        {"eq", Condition::Op::kEq},
        {"gt", Condition::Op::kGt},
        {"gte", Condition::Op::kGte},
        {"lt", Condition::Op::kLt},
        {"lte", Condition::Op::kLte}};
    for (const auto& [name, op] : kOps) {
      if (auto f = m.get(name)) {
        c.op = op;
        c.number = f->unsigned_in(0, std::numeric_limits<std::uint32_t>::max());
      }
    }
    return;
  }
  if (auto f = m.get("eq")) {
    c.op = Condition::Op::kEq;
    c.values.push_back(f->text());
  } else if (auto f = m.get("in")) {
    c.op = Condition::Op::kIn;
    for (const YamlField& v : f->items()) {
      c.values.push_back(v.text());
    }
    if (c.values.empty()) {
      f->fail("at least one value is required");
    }
  } else if (auto f = m.get("exists")) {
    c.op = Condition::Op::kExists;
    c.flag = f->boolean();
  }
}

std::vector<Condition> load_conditions(const YamlField& field) {
  const YamlMap m =
      field.map({"key", "key_group", "stream", "max_tokens", "headers", "guardrails"});
  std::vector<Condition> out;
  if (auto f = m.get("key")) {
    Condition c;
    c.field = Condition::Field::kKey;
    load_matcher(*f, c, /*numeric=*/false);
    out.push_back(std::move(c));
  }
  if (auto f = m.get("key_group")) {
    Condition c;
    c.field = Condition::Field::kKeyGroup;
    load_matcher(*f, c, /*numeric=*/false);
    out.push_back(std::move(c));
  }
  if (auto f = m.get("stream")) {
    Condition c;
    c.field = Condition::Field::kStream;
    c.flag = f->boolean();
    out.push_back(std::move(c));
  }
  if (auto f = m.get("max_tokens")) {
    Condition c;
    c.field = Condition::Field::kMaxTokens;
    load_matcher(*f, c, /*numeric=*/true);
    out.push_back(std::move(c));
  }
  if (auto f = m.get("headers")) {
    for (auto& [name, value] : f->entries()) {
      Condition c;
      c.field = Condition::Field::kHeader;
      c.header = name.literal_text();
      std::transform(c.header.begin(), c.header.end(), c.header.begin(),
                     [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
      if (c.header.empty() || !is_visible_ascii(c.header) || never_forwarded(c.header)) {
        name.fail("a header a rule may test (not a credential or framing header)");
      }
      load_matcher(value, c, /*numeric=*/false);
      out.push_back(std::move(c));
    }
  }
  if (auto f = m.get("guardrails")) {
    Condition c;
    c.field = Condition::Field::kGuardrails;
    load_matcher(*f, c, /*numeric=*/false);
    out.push_back(std::move(c));
  }
  if (out.empty()) {
    field.fail(
        "at least one test is required (key, key_group, stream, max_tokens, headers, "
        "guardrails)");
  }
  return out;
}

}  // namespace

std::span<const int> default_fallback_statuses() {
  static constexpr int kStatuses[] = {408, 429, 500, 502, 503, 504};
  return kStatuses;
}

PolicyNode PolicyReader::node(const YamlField& field, bool in_balance, std::size_t depth) {
  if (depth > kMaxPolicyDepth) {
    field.fail("policy nested deeper than " + std::to_string(kMaxPolicyDepth) + " levels");
  }
  const YamlMap m = field.map({"provider", "model", "weight", "vector_space", "timeout", "fallback",
                               "loadbalance", "conditional"});
  const int kinds = (m.has("fallback") ? 1 : 0) + (m.has("loadbalance") ? 1 : 0) +
                    (m.has("conditional") ? 1 : 0) +
                    ((m.has("provider") || m.has("model")) ? 1 : 0);
  if (kinds != 1) {
    field.fail(kinds == 0
                   ? "expected a target (provider, model), fallback, loadbalance or conditional"
                   : "a node is one of: a target (provider, model), fallback, loadbalance or "
                     "conditional");
  }
  if (m.has("provider") || m.has("model")) {
    return target(m, field, in_balance);
  }
  for (std::string_view leaf_only : {"vector_space", "timeout"}) {
    if (auto f = m.get(leaf_only)) {
      f->fail(std::string(leaf_only) + " belongs to a target");
    }
  }
  PolicyNode node;
  node.source = field.where();
  node.weight = load_weight(m, in_balance);
  if (auto c = m.get("conditional")) {
    conditional(*c, node, depth);
    return node;
  }
  const bool fallback = m.has("fallback");
  const YamlField body = *m.get(fallback ? "fallback" : "loadbalance");
  const YamlMap b =
      fallback ? body.map({"targets", "on_status"}) : body.map({"targets", "strategy"});
  if (fallback) {
    node.kind = PolicyNode::Kind::kFallback;
    if (auto f = b.get("on_status")) {
      for (const YamlField& item : f->one_or_many()) {
        const auto status = static_cast<int>(item.unsigned_in(100, 599));
        for (int never : {400, 401, 403, 404, 413, 422}) {
          if (status == never) {
            item.fail(std::to_string(status) +
                      " is never retried: the same request fails the same way everywhere");
          }
        }
        if (status != 408 && status != 429 && status < 500) {
          // The plan stops on any failure that is not retryable before it reads on_status:
          // listing one would read as a fallback that can never happen.
          item.fail(std::to_string(status) +
                    " can never move on: only 408, 429, 5xx and failures without a status "
                    "are retried");
        }
        node.on_status.push_back(status);
      }
    } else {
      node.on_status.assign(default_fallback_statuses().begin(), default_fallback_statuses().end());
    }
  } else {
    node.kind = PolicyNode::Kind::kLoadBalance;
    if (auto f = b.get("strategy")) {
      const std::string strategy = f->text();
      if (strategy == "weighted") {
        node.strategy = PolicyNode::Strategy::kWeighted;
      } else if (strategy == "ordered") {
        node.strategy = PolicyNode::Strategy::kOrdered;
      } else if (strategy == "least_busy") {
        node.strategy = PolicyNode::Strategy::kLeastBusy;
      } else if (strategy == "latency") {
        node.strategy = PolicyNode::Strategy::kLatency;
      } else if (strategy == "prefix_affinity") {
        node.strategy = PolicyNode::Strategy::kPrefixAffinity;
      } else {
        f->fail("expected weighted, ordered, least_busy, latency or prefix_affinity, got " +
                in_quotes(strategy));
      }
    }
  }
  const YamlField targets = b.required("targets");
  const std::vector<YamlField> items = targets.items();
  if (items.empty()) {
    targets.fail("at least one target is required");
  }
  for (const YamlField& item : items) {
    node.children.push_back(this->node(item, !fallback, depth + 1));
  }
  if (!fallback) {
    bool any_weight = false;
    for (const PolicyNode& child : node.children) {
      any_weight = any_weight || child.weight > 0;
    }
    if (!any_weight) {
      targets.fail("every target has weight 0: at least one must take traffic");
    }
  }
  return node;
}

// conditional: { rules: [{ when: {...}, then: <node> }, ...], default: <node> }
void PolicyReader::conditional(const YamlField& field, PolicyNode& node, std::size_t depth) {
  node.kind = PolicyNode::Kind::kConditional;
  const YamlMap b = field.map({"rules", "default"});
  const YamlField rules = b.required("rules");
  const std::vector<YamlField> items = rules.items();
  if (items.empty()) {
    rules.fail("at least one rule is required");
  }
  for (const YamlField& item : items) {
    const YamlMap rule = item.map({"when", "then"});
    node.when.push_back(load_conditions(rule.required("when")));
    node.children.push_back(this->node(rule.required("then"), false, depth + 1));
  }
  node.children.push_back(this->node(b.required("default"), false, depth + 1));
}

PolicyNode PolicyReader::target(const YamlMap& m, const YamlField& at, bool in_balance,
                                bool leaf_fields) {
  if (targets_.size() >= kMaxTargets) {
    at.fail("more than " + std::to_string(kMaxTargets) + " targets in one route");
  }
  PolicyNode node;
  node.kind = PolicyNode::Kind::kTarget;
  node.source = at.where();
  node.weight = leaf_fields ? load_weight(m, in_balance) : 1;
  const YamlField provider = m.required("provider");
  Target target;
  target.provider = provider.text();
  target.source = at.where();
  providers_.push_back(&declared_.resolve_provider(provider, target.provider));
  target.model = model_name(m.required("model"));
  if (auto f = leaf_fields ? m.get("vector_space") : std::nullopt) {
    target.vector_space = f->text();
    if (target.vector_space.empty() || !is_visible_ascii(target.vector_space)) {
      f->fail("must be a non-empty name without spaces");
    }
  }
  if (auto f = leaf_fields ? m.get("timeout") : std::nullopt) {
    const DeclaredProvider* p = providers_.back();
    target.timeout = load_timeouts(*f, p->active() ? p->timeout : Timeouts{}, p->active());
  }
  node.target = targets_.size();
  targets_.push_back(std::move(target));
  return node;
}

}  // namespace sluice::config
