#include "routing/plan.h"

#include <algorithm>
#include <cmath>

namespace sluice::routing {

namespace {

using config::PolicyNode;

// splitmix64: small, fast and good enough to spread load and jitter.
std::uint64_t mix(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

// A uniform double in (0, 1].
double unit(std::uint64_t r) { return (static_cast<double>(r >> 11) + 1.0) * 0x1.0p-53; }

bool never_retried(int status) {
  switch (status) {
    case 400:
    case 401:
    case 403:
    case 404:
    case 413:
    case 422:
      return true;
    default:
      return false;
  }
}

void collect_paths(const PolicyNode& node, const std::string& path,
                   std::vector<std::string>& paths) {
  if (node.kind == PolicyNode::Kind::kTarget) {
    paths[node.target] = path;
    return;
  }
  for (std::size_t i = 0; i < node.children.size(); ++i) {
    collect_paths(node.children[i],
                  path.empty() ? std::to_string(i) : path + "." + std::to_string(i), paths);
  }
}

}  // namespace

void CompiledPolicy::compile(const config::Route& r, const config::RoutingSettings& routing,
                             HealthRegistry& registry) {
  route = &r;
  breaker = &routing.breaker;
  instance_retry = &routing.retry;
  health.clear();
  for (const config::Target& t : r.targets) {
    health.push_back(&registry.target(t.provider, t.model));
  }
  paths.assign(r.targets.size(), std::string());
  collect_paths(r.policy, std::string(), paths);
  instance_budget = &registry.instance_budget();
  budget_window = routing.budget_window;
}

bool matches(std::span<const config::Condition> tests, const RequestFacts& facts) {
  using config::Condition;
  for (const Condition& c : tests) {
    bool ok = false;
    switch (c.field) {
      case Condition::Field::kStream:
        ok = facts.stream() == c.flag;
        break;
      case Condition::Field::kMaxTokens: {
        const std::optional<std::uint64_t> v = facts.max_tokens();
        if (v) {
          switch (c.op) {
            case Condition::Op::kEq:
              ok = *v == c.number;
              break;
            case Condition::Op::kGt:
              ok = *v > c.number;
              break;
            case Condition::Op::kGte:
              ok = *v >= c.number;
              break;
            case Condition::Op::kLt:
              ok = *v < c.number;
              break;
            case Condition::Op::kLte:
              ok = *v <= c.number;
              break;
            default:
              break;
          }
        }
        break;
      }
      case Condition::Field::kKey:
      case Condition::Field::kKeyGroup:
      case Condition::Field::kHeader: {
        std::optional<std::string_view> v;
        if (c.field == Condition::Field::kKey) {
          v = facts.key();
        } else if (c.field == Condition::Field::kKeyGroup) {
          v = facts.key_group();
          if (v->empty()) {
            v.reset();  // a key without a group has none: only `exists: false` matches it
          }
        } else {
          v = facts.header(c.header);
        }
        if (c.op == Condition::Op::kExists) {
          ok = v.has_value() == c.flag;
        } else if (v) {
          ok = std::find(c.values.begin(), c.values.end(), *v) != c.values.end();
        }
        break;
      }
      case Condition::Field::kGuardrails:
        if (c.op == Condition::Op::kExists) {
          ok = facts.guardrails_found({}) == c.flag;
        } else {
          ok = std::any_of(c.values.begin(), c.values.end(),
                           [&](const std::string& name) { return facts.guardrails_found(name); });
        }
        break;
    }
    if (!ok) {
      return false;
    }
  }
  return true;
}

AttemptPlan::AttemptPlan(const CompiledPolicy& policy, TimePoint now, std::uint64_t seed,
                         const RequestFacts* facts)
    : policy_(policy), retry_(policy.route->retry), facts_(facts), rng_(seed) {
  flatten(policy.route->policy, config::default_fallback_statuses(), now, leaves_);
  max_attempts_ = retry_.max_attempts > 0
                      ? retry_.max_attempts
                      : static_cast<std::uint32_t>(leaves_.size()) * retry_.per_target_attempts;
  deadline_ = now + policy.deadline;
  created_ = now;
}

std::uint64_t stable_hash(std::string_view bytes, std::uint64_t seed) {
  std::uint64_t h = seed;
  for (const char c : bytes) {
    h ^= static_cast<unsigned char>(c);
    h *= 0x100000001b3ull;
  }
  return h;
}

std::uint64_t AttemptPlan::next_random() { return mix(rng_); }

const config::Target& AttemptPlan::first_target(const PolicyNode& node) const {
  const PolicyNode* n = &node;
  while (n->kind != PolicyNode::Kind::kTarget) {
    n = &n->children.front();
  }
  return policy_.route->targets[n->target];
}

std::vector<std::size_t> AttemptPlan::order() const {
  std::vector<std::size_t> out;
  for (const Leaf& leaf : leaves_) {
    out.push_back(leaf.target);
  }
  return out;
}

void AttemptPlan::best_load(const PolicyNode& node, std::int64_t& busy, std::int64_t& ttfb) const {
  if (node.kind != PolicyNode::Kind::kTarget) {
    for (const PolicyNode& child : node.children) {
      best_load(child, busy, ttfb);
    }
    return;
  }
  const TargetHealth& h = *policy_.health[node.target];
  busy = std::min<std::int64_t>(busy, h.in_flight.load(std::memory_order_relaxed));
  const std::int64_t e = h.ttfb_ewma_us.load(std::memory_order_relaxed);
  ttfb = std::min<std::int64_t>(ttfb, e < 0 ? 0 : e);  // no sample yet: worth a try
}

bool AttemptPlan::available(const PolicyNode& node, TimePoint now) const {
  if (node.kind == PolicyNode::Kind::kTarget) {
    return policy_.health[node.target]->available(now);
  }
  for (const PolicyNode& child : node.children) {
    if (available(child, now)) {
      return true;
    }
  }
  return false;
}

void AttemptPlan::flatten(const PolicyNode& node, std::span<const int> on_status, TimePoint now,
                          Leaves& out) {
  switch (node.kind) {
    case PolicyNode::Kind::kTarget:
      out.push_back(Leaf{node.target, on_status});
      return;
    case PolicyNode::Kind::kFallback:
      // In order, but a child whose every target's breaker is open goes after the others: it
      // is still tried when they fail, never skipped.
      for (const bool healthy_pass : {true, false}) {
        for (const PolicyNode& child : node.children) {
          if (available(child, now) == healthy_pass) {
            flatten(child, node.on_status, now, out);
          }
        }
      }
      return;
    case PolicyNode::Kind::kConditional: {
      // The first rule that matches, else the default (the last child): only that branch is
      // planned, so its own fallbacks decide what happens on failure.
      std::size_t chosen = node.children.size() - 1;
      for (std::size_t i = 0; facts_ != nullptr && i < node.when.size(); ++i) {
        if (matches(node.when[i], *facts_)) {
          chosen = i;
          break;
        }
      }
      flatten(node.children[chosen], on_status, now, out);
      return;
    }
    case PolicyNode::Kind::kLoadBalance:
      break;
  }
  // Order the children for this request, then flatten each in turn. A child's health and load
  // are those of its best leaf.
  struct Ranked {
    const PolicyNode* node;
    double key;            // higher first, within its class
    bool failover;         // weight 0: after every weighted child, in the order written
    bool unhealthy;        // no available leaf: after every healthy child
    bool spilled = false;  // prefix_affinity: over its share of the load, after the others
    std::int64_t busy = 0;
  };
  boost::container::small_vector<Ranked, 4> ranked;
  ranked.reserve(node.children.size());
  const std::uint64_t affinity =
      node.strategy == PolicyNode::Strategy::kPrefixAffinity && facts_ != nullptr
          ? facts_->affinity()
          : 0;
  for (std::size_t i = 0; i < node.children.size(); ++i) {
    const PolicyNode& child = node.children[i];
    const bool healthy = available(child, now);
    std::int64_t busy = INT64_MAX;
    std::int64_t ttfb = INT64_MAX;
    best_load(child, busy, ttfb);
    double key = 0;
    switch (node.strategy) {
      case PolicyNode::Strategy::kWeighted:
        // Weighted sampling without replacement (Efraimidis-Spirakis): u^(1/w), higher first.
        key = child.weight > 0 ? std::log(unit(next_random())) / child.weight : 0;
        break;
      case PolicyNode::Strategy::kOrdered:
        key = -static_cast<double>(i);
        break;
      case PolicyNode::Strategy::kLeastBusy:
        // Fewest in flight first; ties broken at random.
        key = -static_cast<double>(busy) + unit(next_random()) * 0.5;
        break;
      case PolicyNode::Strategy::kLatency:
        key = -static_cast<double>(ttfb);
        break;
      case PolicyNode::Strategy::kPrefixAffinity: {
        if (affinity == 0 || child.weight == 0) {
          key = child.weight > 0 ? std::log(unit(next_random())) / child.weight : 0;
          break;
        }
        // Weighted rendezvous: each child's score for this prefix is a hash of both; the
        // highest wins, the next is where the prefix goes when that one fails or is full.
        const config::Target& t = first_target(child);
        std::uint64_t h = stable_hash(t.model, stable_hash(t.provider, affinity));
        key = std::log(unit(mix(h))) / child.weight;
        break;
      }
    }
    ranked.push_back(
        Ranked{&child, key, child.weight == 0, !healthy, false, busy == INT64_MAX ? 0 : busy});
  }
  if (affinity != 0) {
    // Bounded load (consistent hashing with bounded loads, Mirrokni et al.): a child may carry
    // at most 1.5x the mean in flight, plus two; a hot prefix beyond that spills to its next
    // child by score instead of queueing on one target. The slack keeps ordinary unevenness at
    // a few requests in flight (12 conversations on 3 targets) from costing cache hits: a
    // spilled turn misses its provider's prompt cache.
    std::int64_t total = 0;
    std::int64_t serving = 0;
    for (const Ranked& r : ranked) {
      if (!r.failover && !r.unhealthy) {
        total += r.busy;
        ++serving;
      }
    }
    if (serving > 1) {
      const std::int64_t capacity = (3 * (total + 1) + 2 * serving - 1) / (2 * serving) + 2;
      for (Ranked& r : ranked) {
        r.spilled = !r.failover && !r.unhealthy && r.busy + 1 > capacity;
      }
    }
  }
  if (node.strategy == PolicyNode::Strategy::kLatency) {
    // Power of two choices: two weighted children at random, the faster of them first; the
    // others by latency after it. Sampling keeps a slow-but-recovered target getting probes.
    std::vector<std::size_t> weighted;
    for (std::size_t i = 0; i < ranked.size(); ++i) {
      if (!ranked[i].failover) {
        weighted.push_back(i);
      }
    }
    if (weighted.size() >= 2) {
      const std::size_t ia = next_random() % weighted.size();
      std::size_t ib = next_random() % (weighted.size() - 1);
      ib += ib >= ia ? 1 : 0;
      const std::size_t a = weighted[ia];
      const std::size_t b = weighted[ib];
      const std::size_t best = ranked[a].key >= ranked[b].key ? a : b;
      ranked[best].key = 1.0;  // above every -ttfb
    }
  }
  std::stable_sort(ranked.begin(), ranked.end(), [](const Ranked& x, const Ranked& y) {
    if (x.unhealthy != y.unhealthy) {
      return !x.unhealthy;
    }
    if (x.failover != y.failover) {
      return !x.failover;
    }
    if (x.spilled != y.spilled) {
      return !x.spilled;
    }
    return x.failover ? false : x.key > y.key;
  });
  for (const Ranked& r : ranked) {
    flatten(*r.node, on_status, now, out);
  }
}

AttemptPlan::Step AttemptPlan::first() {
  for (TargetHealth* h : policy_.health) {
    h->budget.on_request(created_, policy_.budget_window);
  }
  policy_.instance_budget->on_request(created_, policy_.budget_window);
  at_ = 0;
  at_attempts_ = 1;
  attempts_ = 1;
  return Step{leaves_.front().target, Millis(0)};
}

bool AttemptPlan::moves_on(std::size_t i, const Failure& failure) const {
  if (failure.status == 0) {
    return true;  // no answer at all: connect error, timeout, reset
  }
  const std::span<const int> statuses = leaves_[i].on_status;
  return std::find(statuses.begin(), statuses.end(), failure.status) != statuses.end();
}

bool AttemptPlan::spend_retry(std::size_t target, TimePoint now) {
  const Millis window = policy_.budget_window;
  const config::RetrySettings& instance = *policy_.instance_retry;
  if (!policy_.instance_budget->try_spend(now, window, instance.budget_ratio,
                                          instance.budget_burst)) {
    return false;
  }
  if (!policy_.health[target]->budget.try_spend(now, window, retry_.budget_ratio,
                                                retry_.budget_burst)) {
    policy_.instance_budget->refund(now, window);
    return false;
  }
  return true;
}

std::optional<AttemptPlan::Step> AttemptPlan::after_failure(const Failure& failure, TimePoint now) {
  if (!failure.retryable || never_retried(failure.status)) {
    stop_reason_ = "not retryable";
    return std::nullopt;
  }
  if (attempts_ >= max_attempts_) {
    stop_reason_ = "attempts exhausted";
    return std::nullopt;
  }
  // The same target again, when it may be tried more and did not ask for a longer wait than
  // the cap; else the next target, when this failure lets the tree move on.
  const bool asked_too_long = failure.retry_after && *failure.retry_after > retry_.retry_after_max;
  bool same = at_attempts_ < retry_.per_target_attempts && !asked_too_long;
  // Only a retry at the same target is amplification the budgets bound: moving on sends the
  // request to another target once (the tree bounds how often), while the failing one rests.
  // Without budget for a retry here, the tree may still move on.
  bool budget_refused = false;
  if (same && !spend_retry(leaves_[at_].target, now)) {
    same = false;
    budget_refused = true;
  }
  Step step;
  if (same) {
    step.target = leaves_[at_].target;
    step.wait = backoff(retry_, at_attempts_ - 1, next_random());
    if (failure.retry_after) {
      step.wait = std::max(step.wait, *failure.retry_after);
    }
  } else if (at_ + 1 < leaves_.size() && moves_on(at_, failure)) {
    step.target = leaves_[at_ + 1].target;
    step.wait = Millis(0);  // another target: no reason to wait
  } else {
    stop_reason_ = budget_refused             ? "retry budget exhausted"
                   : at_ + 1 < leaves_.size() ? "status does not fall back"
                                              : "targets exhausted";
    return std::nullopt;
  }
  if (now + step.wait >= deadline_) {
    if (same) {
      policy_.health[step.target]->budget.refund(now, policy_.budget_window);
      policy_.instance_budget->refund(now, policy_.budget_window);
    }
    stop_reason_ = "deadline";
    return std::nullopt;
  }
  if (same) {
    ++at_attempts_;
  } else {
    ++at_;
    at_attempts_ = 1;
  }
  ++attempts_;
  return step;
}

Millis AttemptPlan::backoff(const config::RetrySettings& retry, std::uint32_t retry_index,
                            std::uint64_t random) {
  const std::int64_t base = retry.backoff_base.count();
  const std::int64_t cap = retry.backoff_max.count();
  std::int64_t ceiling = base;
  for (std::uint32_t i = 0; i < retry_index && ceiling < cap; ++i) {
    ceiling *= 2;
  }
  ceiling = std::min(ceiling, cap);
  if (ceiling <= 0) {
    return Millis(0);
  }
  return Millis(static_cast<std::int64_t>(random % static_cast<std::uint64_t>(ceiling)));
}

}  // namespace sluice::routing
