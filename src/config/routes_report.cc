#include "config/routes_report.h"

#include <algorithm>
#include <sstream>
#include <vector>

namespace sluice::config {

namespace {

// Max-plus algebra over "attempts spent": costs[n] is the longest time `n` attempts can take
// (milliseconds), kNone where `n` attempts are impossible.
constexpr std::int64_t kNone = -1;
using Costs = std::vector<std::int64_t>;

Costs none(std::size_t cap) { return Costs(cap + 1, kNone); }

Costs identity(std::size_t cap) {
  Costs c = none(cap);
  c[0] = 0;
  return c;
}

// Both in sequence: a attempts of one part then b of the other.
Costs combine(const Costs& a, const Costs& b) {
  Costs out = none(a.size() - 1);
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a[i] == kNone) {
      continue;
    }
    for (std::size_t j = 0; i + j < out.size(); ++j) {
      if (b[j] != kNone) {
        out[i + j] = std::max(out[i + j], a[i] + b[j]);
      }
    }
  }
  return out;
}

void keep_max(Costs& into, const Costs& other) {
  for (std::size_t i = 0; i < into.size(); ++i) {
    into[i] = std::max(into[i], other[i]);
  }
}

// A node's costs when the plan leaves it after its last leaf (`full`: every leaf visited) and
// when the request may end inside it (`partial`: a prefix of its leaves, at least one).
struct NodeCosts {
  Costs full;
  Costs partial;
};

class ChainBound {
 public:
  ChainBound(const Config& config, const Route& route, std::size_t cap)
      : config_(config), route_(route), cap_(cap) {
    // The longest wait before the j-th retry at one target (j = 1 .. per_target_attempts - 1):
    // the full-jitter ceiling for it, or the longest Retry-After the plan still waits for.
    const RetrySettings& r = route.retry;
    waits_.push_back(0);
    std::int64_t ceiling = r.backoff_base.count();
    for (std::uint32_t j = 1; j < r.per_target_attempts; ++j) {
      waits_.push_back(
          std::max(std::min(ceiling, r.backoff_max.count()), r.retry_after_max.count()));
      ceiling = std::min(ceiling * 2, r.backoff_max.count());
    }
  }

  NodeCosts of(const PolicyNode& node) const {
    switch (node.kind) {
      case PolicyNode::Kind::kTarget:
        return leaf(node.target);
      case PolicyNode::Kind::kFallback:
        return in_order(node);
      case PolicyNode::Kind::kLoadBalance:
        return any_order(node);
      case PolicyNode::Kind::kConditional:
        return either(node);
    }
    return {};
  }

 private:
  NodeCosts leaf(std::size_t target) const {
    const std::int64_t total = effective_timeouts(config_, route_, target).total.count();
    Costs c = none(cap_);
    std::int64_t sum = 0;
    for (std::size_t n = 1; n <= route_.retry.per_target_attempts && n <= cap_; ++n) {
      sum += total + waits_[n - 1];
      c[n] = sum;
    }
    return {c, c};
  }

  // Children in the order written: every child before the last one reached is visited whole.
  NodeCosts in_order(const PolicyNode& node) const {
    Costs before = identity(cap_);
    Costs partial = none(cap_);
    for (const PolicyNode& child : node.children) {
      const NodeCosts c = of(child);
      keep_max(partial, combine(before, c.partial));
      before = combine(before, c.full);
    }
    return {before, partial};
  }

  // A load balancer may put its children in any order (its strategy, then health): some
  // children visited whole, then at most one the request ends in.
  NodeCosts any_order(const PolicyNode& node) const {
    Costs whole = identity(cap_);  // a set of children, each visited whole
    Costs ending = none(cap_);     // the same plus the child the request ends in
    Costs all = identity(cap_);
    for (const PolicyNode& child : node.children) {
      const NodeCosts c = of(child);
      Costs next_ending = ending;
      keep_max(next_ending, combine(ending, c.full));
      keep_max(next_ending, combine(whole, c.partial));
      keep_max(whole, combine(whole, c.full));
      ending = std::move(next_ending);
      all = combine(all, c.full);
    }
    return {all, ending};
  }

  // A conditional plans exactly one branch: the worst of them.
  NodeCosts either(const PolicyNode& node) const {
    NodeCosts worst{none(cap_), none(cap_)};
    for (const PolicyNode& child : node.children) {
      const NodeCosts c = of(child);
      keep_max(worst.full, c.full);
      keep_max(worst.partial, c.partial);
    }
    return worst;
  }

  const Config& config_;
  const Route& route_;
  std::size_t cap_;
  std::vector<std::int64_t> waits_;
};

std::size_t leaf_count(const PolicyNode& node) {
  if (node.kind == PolicyNode::Kind::kTarget) {
    return 1;
  }
  std::size_t n = 0;
  for (const PolicyNode& child : node.children) {
    n += leaf_count(child);
  }
  return n;
}

std::string ms(Millis m) { return std::to_string(m.count()) + " ms"; }

// "key in [a, b], key_group exists, stream = true, max_tokens > 4000, header x-tier = gold"
std::string describe(const std::vector<Condition>& tests) {
  std::string out;
  for (const Condition& c : tests) {
    if (!out.empty()) {
      out += ", ";
    }
    switch (c.field) {
      case Condition::Field::kKey:
        out += "key";
        break;
      case Condition::Field::kKeyGroup:
        out += "key_group";
        break;
      case Condition::Field::kHeader:
        out += "header " + c.header;
        break;
      case Condition::Field::kStream:
        out += std::string("stream = ") + (c.flag ? "true" : "false");
        continue;
      case Condition::Field::kMaxTokens:
        out += "max_tokens";
        break;
      case Condition::Field::kGuardrails:
        out += "guardrails";
        break;
    }
    switch (c.op) {
      case Condition::Op::kExists:
        out += c.flag ? " exists" : " absent";
        break;
      case Condition::Op::kIn: {
        out += " in [";
        for (std::size_t i = 0; i < c.values.size(); ++i) {
          out += (i > 0 ? ", " : "") + c.values[i];
        }
        out += "]";
        break;
      }
      case Condition::Op::kEq:
        out += " = " + (c.field == Condition::Field::kMaxTokens ? std::to_string(c.number)
                                                                : c.values.front());
        break;
      case Condition::Op::kGt:
        out += " > " + std::to_string(c.number);
        break;
      case Condition::Op::kGte:
        out += " >= " + std::to_string(c.number);
        break;
      case Condition::Op::kLt:
        out += " < " + std::to_string(c.number);
        break;
      case Condition::Op::kLte:
        out += " <= " + std::to_string(c.number);
        break;
    }
  }
  return out;
}

std::string_view strategy_name(PolicyNode::Strategy s) {
  switch (s) {
    case PolicyNode::Strategy::kWeighted:
      return "weighted";
    case PolicyNode::Strategy::kOrdered:
      return "ordered";
    case PolicyNode::Strategy::kLeastBusy:
      return "least_busy";
    case PolicyNode::Strategy::kLatency:
      return "latency";
    case PolicyNode::Strategy::kPrefixAffinity:
      return "prefix_affinity";
  }
  return "weighted";
}

class Printer {
 public:
  Printer(const Config& config, const Route& route, std::ostringstream& out)
      : config_(config), route_(route), out_(out) {}

  // `path`: the node's place in the tree ("" for the root, as in x-sluice-target).
  void node(const PolicyNode& n, const std::string& path, std::size_t depth, bool in_balance) {
    const std::string indent(4 + 2 * depth, ' ');
    out_ << indent;
    if (!path.empty()) {
      out_ << '[' << path << "] ";
    }
    switch (n.kind) {
      case PolicyNode::Kind::kTarget: {
        const Target& t = route_.targets[n.target];
        out_ << "target " << t.provider << '/' << t.model;
        weight(n, in_balance);
        if (!t.vector_space.empty()) {
          out_ << "  vector_space " << t.vector_space;
        }
        out_ << '\n';
        const char* from = nullptr;
        const Timeouts to = effective_timeouts(config_, route_, n.target, &from);
        out_ << indent << std::string(path.empty() ? 0 : path.size() + 3, ' ') << "timeout connect "
             << ms(to.connect) << ", first_byte " << ms(to.first_byte) << ", idle " << ms(to.idle)
             << ", total " << ms(to.total) << " (" << from << ")\n";
        return;
      }
      case PolicyNode::Kind::kFallback: {
        out_ << "fallback  on_status";
        const char* sep = " ";
        for (int s : n.on_status) {
          out_ << sep << s;
          sep = ",";
        }
        break;
      }
      case PolicyNode::Kind::kLoadBalance:
        out_ << "loadbalance  strategy " << strategy_name(n.strategy);
        break;
      case PolicyNode::Kind::kConditional:
        out_ << "conditional";
        break;
    }
    weight(n, in_balance);
    out_ << '\n';
    for (std::size_t i = 0; i < n.children.size(); ++i) {
      if (n.kind == PolicyNode::Kind::kConditional) {
        out_ << indent << "  " << (i < n.when.size() ? "when " + describe(n.when[i]) : "default")
             << ":\n";
      }
      node(n.children[i], path.empty() ? std::to_string(i) : path + '.' + std::to_string(i),
           depth + 1, n.kind == PolicyNode::Kind::kLoadBalance);
    }
  }

 private:
  void weight(const PolicyNode& n, bool in_balance) {
    if (in_balance) {
      out_ << "  weight " << n.weight << (n.weight == 0 ? " (failover only)" : "");
    }
  }

  const Config& config_;
  const Route& route_;
  std::ostringstream& out_;
};

}  // namespace

Timeouts effective_timeouts(const Config& config, const Route& route, std::size_t target,
                            const char** from) {
  const Target& t = route.targets[target];
  const char* source = "provider";
  Timeouts result;
  if (t.timeout) {
    source = "target";
    result = *t.timeout;
  } else if (route.timeout) {
    source = "route";
    result = *route.timeout;
  } else {
    for (const Provider& p : config.providers) {
      if (p.id == t.provider) {
        result = p.timeout;
        break;
      }
    }
  }
  if (from != nullptr) {
    *from = source;
  }
  return result;
}

LatencyBound worst_case_latency(const Config& config, const Route& route) {
  LatencyBound bound;
  const RetrySettings& r = route.retry;
  const std::size_t tree_attempts = leaf_count(route.policy) * r.per_target_attempts;
  bound.max_attempts = static_cast<std::uint32_t>(
      r.max_attempts > 0 ? std::min<std::size_t>(r.max_attempts, tree_attempts) : tree_attempts);
  const Costs costs = ChainBound(config, route, bound.max_attempts).of(route.policy).partial;
  bound.chain = Millis(*std::max_element(costs.begin(), costs.end()));
  for (std::size_t i = 0; i < route.targets.size(); ++i) {
    bound.longest_attempt =
        std::max(bound.longest_attempt, effective_timeouts(config, route, i).total);
  }
  bound.deadline_configured = r.deadline.count() > 0;
  bound.deadline = bound.deadline_configured ? r.deadline : bound.longest_attempt;
  // Each attempt gets only the time left before the deadline, so it bounds the whole request.
  bound.worst = bound.max_attempts <= 1 ? bound.chain : std::min(bound.chain, bound.deadline);
  return bound;
}

std::string describe_routes(const Config& config) {
  std::ostringstream out;
  out << config.source_path << ": version " << config.version << ", " << config.routes.size()
      << " routes\n";
  for (const Route& route : config.routes) {
    out << "\nroute ";
    for (std::size_t i = 0; i < route.aliases.size(); ++i) {
      out << (i > 0 ? ", " : "") << route.aliases[i];
    }
    out << " (" << (route.kind == RouteKind::kEmbeddings ? "embeddings" : "chat") << ", "
        << route.source << ")\n";
    out << "  policy:\n";
    Printer(config, route, out).node(route.policy, "", 0, false);

    const RetrySettings& r = route.retry;
    const LatencyBound bound = worst_case_latency(config, route);
    const std::size_t leaves = leaf_count(route.policy);
    out << "  retry: max_attempts " << r.max_attempts;
    if (r.max_attempts == 0) {
      out << " (= " << leaves << (leaves == 1 ? " target" : " targets") << " x "
          << r.per_target_attempts << " = " << bound.max_attempts << ")";
    } else if (r.max_attempts != bound.max_attempts) {
      out << " (the tree allows " << bound.max_attempts << ")";
    }
    out << ", per_target_attempts " << r.per_target_attempts << ", backoff "
        << r.backoff_base.count() << ".." << ms(r.backoff_max) << " (full jitter)"
        << ", retry_after_max " << ms(r.retry_after_max) << ", budget_ratio " << r.budget_ratio
        << ", budget_burst " << r.budget_burst << ", deadline_ms " << r.deadline.count();
    if (!bound.deadline_configured) {
      out << " (= longest target total, " << ms(bound.deadline) << ")";
    }
    out << '\n';
    out << "  worst case: " << ms(bound.worst) << '\n';
    out << "    longest chain: " << bound.max_attempts
        << (bound.max_attempts == 1 ? " attempt, " : " attempts, ") << ms(bound.chain)
        << " of timeouts and backoffs\n";
    if (bound.max_attempts > 1) {
      out << "    deadline: " << ms(bound.deadline)
          << (bound.deadline_configured ? " (retry.deadline_ms)" : " (longest target total)")
          << " bounds every attempt together (each gets only the time left)\n";
    }
  }
  if (!config.notes.empty()) {
    out << '\n';
  }
  for (const std::string& note : config.notes) {
    out << "note: " << note << '\n';
  }
  return out.str();
}

}  // namespace sluice::config
