// The attempt plan: tree order, load balancing, fallback rules, retries on one target, budgets
// and deadlines. Decisions only: a SimulatedClock, no sockets, no sleeps.

#include "routing/plan.h"

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "providers/registry.h"

namespace sluice::routing {
namespace {

using namespace std::chrono_literals;

class PlanTest : public ::testing::Test {
 protected:
  // A config with providers a, b, c, d (mock) and the given routes.
  void load(const std::string& routes, const std::string& routing = "") {
    const std::string yaml = "version: 1\nauth: none\n" + routing +
                             "providers:\n"
                             "  - { id: a, adapter: mock }\n"
                             "  - { id: b, adapter: mock }\n"
                             "  - { id: c, adapter: mock }\n"
                             "  - { id: d, adapter: mock }\n"
                             "routes:\n" +
                             routes;
    auto loaded = providers::load_config_string(yaml, "test.yaml");
    ASSERT_TRUE(loaded) << loaded.error().message();
    config_ = *loaded;
    policy_.compile(config_->routes.front(), config_->routing, registry_);
  }
  std::string provider_of(std::size_t target) const {
    return config_->routes.front().targets[target].provider;
  }
  std::string order(AttemptPlan& plan) const {
    std::string out;
    for (std::size_t t : plan.order()) {
      out += provider_of(t);
    }
    return out;
  }
  TargetHealth& health(const std::string& provider) { return registry_.target(provider, "m"); }

  SimulatedClock clock_;
  HealthRegistry registry_;
  std::shared_ptr<const config::Config> config_;
  CompiledPolicy policy_;
};

Failure status(int s) {
  Failure f;
  f.status = s;
  f.retryable = s == 408 || s == 429 || s >= 500;
  return f;
}

Failure no_answer() {
  Failure f;
  f.retryable = true;
  return f;
}

TEST_F(PlanTest, FallbackTriesInOrderAndPathsNameTheTree) {
  load(
      "  - alias: x\n"
      "    targets: [{provider: a, model: m}, {provider: b, model: m}, {provider: c, model: m}]\n");
  AttemptPlan plan(policy_, clock_.now(), 1);
  EXPECT_EQ(order(plan), "abc");
  EXPECT_EQ(policy_.paths, (std::vector<std::string>{"0", "1", "2"}));
  EXPECT_EQ(provider_of(plan.first().target), "a");
  auto next = plan.after_failure(status(503), clock_.now());
  ASSERT_TRUE(next);
  EXPECT_EQ(provider_of(next->target), "b");
  EXPECT_EQ(next->wait, 0ms) << "another target: no backoff";
  next = plan.after_failure(no_answer(), clock_.now());
  ASSERT_TRUE(next);
  EXPECT_EQ(provider_of(next->target), "c");
  EXPECT_FALSE(plan.after_failure(status(503), clock_.now()));
  EXPECT_EQ(plan.stop_reason(), "attempts exhausted");
  EXPECT_EQ(plan.attempts(), 3u);
}

TEST_F(PlanTest, NeverRetriedStatusesStopAtOnce) {
  load(
      "  - alias: x\n"
      "    targets: [{provider: a, model: m}, {provider: b, model: m}]\n");
  for (int s : {400, 401, 403, 404, 413, 422}) {
    AttemptPlan plan(policy_, clock_.now(), 1);
    plan.first();
    Failure f = status(s);
    f.retryable = true;  // even when an adapter says otherwise
    EXPECT_FALSE(plan.after_failure(f, clock_.now())) << s;
    EXPECT_EQ(plan.stop_reason(), "not retryable");
  }
}

TEST_F(PlanTest, OnStatusDecidesWhichStatusesMoveOn) {
  load(
      "  - alias: x\n"
      "    policy:\n"
      "      fallback:\n"
      "        on_status: [503]\n"
      "        targets: [{provider: a, model: m}, {provider: b, model: m}]\n");
  AttemptPlan plan(policy_, clock_.now(), 1);
  plan.first();
  EXPECT_FALSE(plan.after_failure(status(500), clock_.now()));
  EXPECT_EQ(plan.stop_reason(), "status does not fall back");
  AttemptPlan again(policy_, clock_.now(), 1);
  again.first();
  EXPECT_TRUE(again.after_failure(status(503), clock_.now()));
  AttemptPlan timeout(policy_, clock_.now(), 1);
  timeout.first();
  EXPECT_TRUE(timeout.after_failure(no_answer(), clock_.now())) << "no status: always moves on";
}

TEST_F(PlanTest, WeightedBalanceFollowsWeightsAndWeightZeroIsFailoverOnly) {
  load(
      "  - alias: x\n"
      "    policy:\n"
      "      loadbalance:\n"
      "        targets:\n"
      "          - { provider: a, model: m, weight: 3 }\n"
      "          - { provider: b, model: m, weight: 1 }\n"
      "          - { provider: c, model: m, weight: 0 }\n");
  std::map<std::string, int> first;
  const int n = 20000;
  for (int i = 0; i < n; ++i) {
    AttemptPlan plan(policy_, clock_.now(), static_cast<std::uint64_t>(i) * 7919 + 13);
    const std::string o = order(plan);
    ASSERT_EQ(o.size(), 3u);
    EXPECT_EQ(o[2], 'c') << "weight 0 only after every weighted target";
    ++first[o.substr(0, 1)];
  }
  EXPECT_EQ(first.count("c"), 0u);
  // 3:1 -> 75%; the binomial standard deviation at n = 20000 is 0.3%: allow 1.5%.
  EXPECT_NEAR(first["a"] / static_cast<double>(n), 0.75, 0.015);
}

TEST_F(PlanTest, OpenBreakersGoLastButAreStillTried) {
  load(
      "  - alias: x\n"
      "    policy:\n"
      "      loadbalance:\n"
      "        strategy: ordered\n"
      "        targets: [{provider: a, model: m}, {provider: b, model: m}]\n",
      "routing: { circuit_breaker: { min_requests: 4, error_rate: 0.5, open_ms: 1000 } }\n");
  const auto& settings = config_->routing.breaker;
  for (int i = 0; i < 4; ++i) {
    health("a").breaker.record(clock_.now(), true, settings);
  }
  ASSERT_EQ(health("a").breaker.state(), Breaker::State::kOpen);
  AttemptPlan plan(policy_, clock_.now(), 1);
  EXPECT_EQ(order(plan), "ba");
  // Both open: every target still in the plan, in their order.
  for (int i = 0; i < 4; ++i) {
    health("b").breaker.record(clock_.now(), true, settings);
  }
  AttemptPlan both(policy_, clock_.now(), 1);
  EXPECT_EQ(order(both), "ab");
}

TEST_F(PlanTest, AFallbackTriesAnOpenPrimaryLast) {
  load(
      "  - alias: x\n"
      "    targets: [{provider: a, model: m}, {provider: b, model: m}]\n",
      "routing: { circuit_breaker: { min_requests: 2, error_rate: 0.5, open_ms: 1000 } }\n");
  for (int i = 0; i < 2; ++i) {
    health("a").breaker.record(clock_.now(), true, config_->routing.breaker);
  }
  AttemptPlan plan(policy_, clock_.now(), 1);
  EXPECT_EQ(order(plan), "ba");
  clock_.advance(1000ms);  // due for a probe: first again
  AttemptPlan later(policy_, clock_.now(), 1);
  EXPECT_EQ(order(later), "ab");
}

TEST_F(PlanTest, ATargetThatAskedForRoomGoesLastUntilItsTime) {
  load(
      "  - alias: x\n"
      "    targets: [{provider: a, model: m}, {provider: b, model: m}]\n");
  health("a").back_off_until(clock_.now() + 1000ms);
  AttemptPlan plan(policy_, clock_.now(), 1);
  EXPECT_EQ(order(plan), "ba");
  clock_.advance(1000ms);
  AttemptPlan later(policy_, clock_.now(), 1);
  EXPECT_EQ(order(later), "ab");
}

TEST_F(PlanTest, LeastBusyPrefersFewerInFlight) {
  load(
      "  - alias: x\n"
      "    policy:\n"
      "      loadbalance:\n"
      "        strategy: least_busy\n"
      "        targets: [{provider: a, model: m}, {provider: b, model: m}]\n");
  health("a").in_flight = 5;
  health("b").in_flight = 1;
  for (std::uint64_t seed = 0; seed < 50; ++seed) {
    AttemptPlan plan(policy_, clock_.now(), seed);
    EXPECT_EQ(order(plan), "ba");
  }
}

TEST_F(PlanTest, LatencyPrefersTheFasterOfTwoChoices) {
  load(
      "  - alias: x\n"
      "    policy:\n"
      "      loadbalance:\n"
      "        strategy: latency\n"
      "        targets: [{provider: a, model: m}, {provider: b, model: m}]\n");
  health("a").observe_ttfb(900ms);
  health("b").observe_ttfb(100ms);
  for (std::uint64_t seed = 0; seed < 50; ++seed) {
    AttemptPlan plan(policy_, clock_.now(), seed);
    EXPECT_EQ(order(plan), "ba");
  }
}

// Facts that carry only an affinity key.
struct Affinity final : RequestFacts {
  explicit Affinity(std::uint64_t h) : hash(h) {}
  std::string_view key() const override { return {}; }
  std::optional<std::string_view> header(std::string_view) const override { return {}; }
  bool stream() const override { return false; }
  std::optional<std::uint64_t> max_tokens() const override { return {}; }
  std::uint64_t affinity() const override { return hash; }
  std::uint64_t hash;
};

const char* kAffinityRoute =
    "  - alias: x\n"
    "    policy:\n"
    "      loadbalance:\n"
    "        strategy: prefix_affinity\n"
    "        targets: [{provider: a, model: m}, {provider: b, model: m}, {provider: c, model: "
    "m}]\n";

TEST_F(PlanTest, PrefixAffinitySendsOnePrefixToOneTargetWhateverTheSeed) {
  load(kAffinityRoute);
  std::map<std::string, int> firsts;
  for (std::uint64_t prefix = 1; prefix <= 300; ++prefix) {
    const Affinity facts(stable_hash(std::to_string(prefix)) | 1);
    AttemptPlan plan(policy_, clock_.now(), 7, &facts);
    const std::string want = order(plan);
    for (std::uint64_t seed = 0; seed < 20; ++seed) {
      AttemptPlan again(policy_, clock_.now(), seed, &facts);
      ASSERT_EQ(order(again), want) << "prefix " << prefix << " seed " << seed;
    }
    ++firsts[want.substr(0, 1)];
  }
  // Prefixes spread over the targets (each about a third; rendezvous hashing is uniform).
  for (const char* p : {"a", "b", "c"}) {
    EXPECT_GT(firsts[p], 60) << p;
  }
}

TEST_F(PlanTest, PrefixAffinityMovesOnlyTheRemovedTargetsPrefixes) {
  load(kAffinityRoute);
  std::map<std::uint64_t, std::string> before;
  for (std::uint64_t prefix = 1; prefix <= 300; ++prefix) {
    const Affinity facts(stable_hash(std::to_string(prefix)) | 1);
    AttemptPlan plan(policy_, clock_.now(), 1, &facts);
    before[prefix] = order(plan);
  }
  // c asks to be left alone (as an open breaker does): its prefixes go to their second
  // choice; nobody else moves.
  health("c").back_off_until(clock_.now() + 60s);
  for (std::uint64_t prefix = 1; prefix <= 300; ++prefix) {
    const Affinity facts(stable_hash(std::to_string(prefix)) | 1);
    AttemptPlan plan(policy_, clock_.now(), 1, &facts);
    const std::string& was = before[prefix];
    if (was[0] == 'c') {
      EXPECT_EQ(order(plan), was.substr(1) + "c") << "its next choice, c tried last";
    } else {
      EXPECT_EQ(order(plan)[0], was[0]) << prefix;
    }
  }
}

TEST_F(PlanTest, PrefixAffinitySpillsAHotPrefixPastItsBoundedLoad) {
  load(kAffinityRoute);
  const Affinity facts(stable_hash("hot system prompt") | 1);
  AttemptPlan idle(policy_, clock_.now(), 1, &facts);
  const std::string usual = order(idle);
  // Its target carries far more than 1.25x the mean: the prefix goes to its second choice.
  health(usual.substr(0, 1)).in_flight = 12;
  health(usual.substr(1, 1)).in_flight = 2;
  health(usual.substr(2, 1)).in_flight = 2;
  AttemptPlan busy(policy_, clock_.now(), 1, &facts);
  EXPECT_EQ(order(busy), usual.substr(1) + usual.substr(0, 1));
  // Within its share, it stays.
  health(usual.substr(0, 1)).in_flight = 3;
  AttemptPlan fair(policy_, clock_.now(), 1, &facts);
  EXPECT_EQ(order(fair), usual);
}

TEST_F(PlanTest, PrefixAffinityWithoutAKeyBalancesByWeight) {
  load(kAffinityRoute);
  const Affinity none(0);
  std::map<std::string, int> firsts;
  for (std::uint64_t seed = 0; seed < 300; ++seed) {
    AttemptPlan plan(policy_, clock_.now(), seed, &none);
    ++firsts[order(plan).substr(0, 1)];
  }
  EXPECT_EQ(firsts.size(), 3u);
}

TEST_F(PlanTest, SameTargetRetriesBackOffWithFullJitterAndHonourRetryAfter) {
  load(
      "  - alias: x\n"
      "    targets: [{provider: a, model: m}, {provider: b, model: m}]\n"
      "    retry: { per_target_attempts: 3, backoff_base_ms: 100, backoff_max_ms: 150,\n"
      "             retry_after_max_ms: 2000 }\n");
  AttemptPlan plan(policy_, clock_.now(), 42);
  plan.first();
  auto next = plan.after_failure(status(503), clock_.now());
  ASSERT_TRUE(next);
  EXPECT_EQ(provider_of(next->target), "a");
  EXPECT_LT(next->wait, 100ms);
  Failure asked = status(429);
  asked.retry_after = 1500ms;
  next = plan.after_failure(asked, clock_.now());
  ASSERT_TRUE(next);
  EXPECT_EQ(provider_of(next->target), "a");
  EXPECT_EQ(next->wait, 1500ms) << "the upstream's wait, when within the cap";
  next = plan.after_failure(status(503), clock_.now());
  ASSERT_TRUE(next);
  EXPECT_EQ(provider_of(next->target), "b") << "three attempts at a: move on";
}

TEST_F(PlanTest, ARetryAfterAboveTheCapMovesToTheNextTarget) {
  load(
      "  - alias: x\n"
      "    targets: [{provider: a, model: m}, {provider: b, model: m}]\n"
      "    retry: { per_target_attempts: 3, retry_after_max_ms: 2000 }\n");
  AttemptPlan plan(policy_, clock_.now(), 1);
  plan.first();
  Failure asked = status(429);
  asked.retry_after = 30s;
  auto next = plan.after_failure(asked, clock_.now());
  ASSERT_TRUE(next);
  EXPECT_EQ(provider_of(next->target), "b");
  EXPECT_EQ(next->wait, 0ms);
}

TEST_F(PlanTest, BackoffCeilingDoublesUpToTheCap) {
  config::RetrySettings retry;
  retry.backoff_base = 100ms;
  retry.backoff_max = 1000ms;
  for (std::uint64_t r = 0; r < 2000; r += 7) {
    EXPECT_LT(AttemptPlan::backoff(retry, 0, r * 2654435761ULL), 100ms);
    EXPECT_LT(AttemptPlan::backoff(retry, 2, r * 2654435761ULL), 400ms);
    EXPECT_LT(AttemptPlan::backoff(retry, 30, r * 2654435761ULL), 1000ms);
  }
  // Full jitter spreads over the whole range, not just near the ceiling.
  EXPECT_LT(AttemptPlan::backoff(retry, 3, 5), 10ms);
}

TEST_F(PlanTest, TheDeadlineBoundsEveryAttemptTogether) {
  load(
      "  - alias: x\n"
      "    targets: [{provider: a, model: m}, {provider: b, model: m}]\n"
      "    retry: { per_target_attempts: 2, deadline_ms: 1000 }\n");
  policy_.deadline = config_->routes.front().retry.deadline;
  AttemptPlan plan(policy_, clock_.now(), 1);
  plan.first();
  clock_.advance(999ms);
  Failure asked = status(503);
  asked.retry_after = 10ms;
  EXPECT_FALSE(plan.after_failure(asked, clock_.now()));
  EXPECT_EQ(plan.stop_reason(), "deadline");
}

TEST_F(PlanTest, RetriesStayWithinTheBudgetInAStorm) {
  load(
      "  - alias: x\n"
      "    provider: a\n"
      "    model: m\n"
      "    retry: { per_target_attempts: 3, budget_ratio: 0.1, budget_burst: 5 }\n");
  const int requests = 1000;
  int attempts = 0;
  for (int i = 0; i < requests; ++i) {
    AttemptPlan plan(policy_, clock_.now(), static_cast<std::uint64_t>(i));
    plan.first();
    ++attempts;
    while (plan.after_failure(status(429), clock_.now())) {
      ++attempts;
    }
  }
  // 1000 requests: at most 10% of them plus the initial reserve as retries.
  EXPECT_LE(attempts, requests + requests / 10 + 5);
  EXPECT_GE(attempts, requests + requests / 10 - 5) << "the budget is spent, not hoarded";
}

TEST_F(PlanTest, MovingToTheNextTargetSpendsNoBudget) {
  load(
      "  - alias: x\n"
      "    targets: [{provider: a, model: m}, {provider: b, model: m}]\n"
      "    retry: { budget_ratio: 0, budget_burst: 0 }\n",
      "routing: { retry: { budget_ratio: 0, budget_burst: 0 } }\n");
  for (int i = 0; i < 50; ++i) {
    AttemptPlan plan(policy_, clock_.now(), static_cast<std::uint64_t>(i));
    plan.first();
    auto next = plan.after_failure(status(429), clock_.now());
    ASSERT_TRUE(next) << "a storm on a must not stop the failover to b";
    EXPECT_EQ(provider_of(next->target), "b");
  }
}

TEST_F(PlanTest, WithoutBudgetForASameTargetRetryTheTreeMovesOn) {
  load(
      "  - alias: x\n"
      "    targets: [{provider: a, model: m}, {provider: b, model: m}]\n"
      "    retry: { per_target_attempts: 3, budget_ratio: 0, budget_burst: 0 }\n");
  AttemptPlan plan(policy_, clock_.now(), 1);
  plan.first();
  auto next = plan.after_failure(status(503), clock_.now());
  ASSERT_TRUE(next);
  EXPECT_EQ(provider_of(next->target), "b") << "no retry at a, but b is not a retry";
  auto last = plan.after_failure(status(503), clock_.now());
  EXPECT_FALSE(last);
  EXPECT_EQ(plan.stop_reason(), "retry budget exhausted");
}

TEST_F(PlanTest, RetriesFromAStormAgeOutOfTheBudgetWindow) {
  load(
      "  - alias: x\n"
      "    provider: a\n"
      "    model: m\n"
      "    retry: { per_target_attempts: 2, budget_ratio: 0.1, budget_burst: 0 }\n",
      "routing: { budget_window_ms: 1000 }\n");
  auto retries_for = [&](int requests) {
    int retries = 0;
    for (int i = 0; i < requests; ++i) {
      AttemptPlan plan(policy_, clock_.now(), static_cast<std::uint64_t>(i));
      plan.first();
      while (plan.after_failure(status(503), clock_.now())) {
        ++retries;
      }
    }
    return retries;
  };
  EXPECT_EQ(retries_for(100), 10);
  clock_.advance(1000ms);
  EXPECT_EQ(retries_for(50), 5) << "a new window: only its own requests count";
}

TEST_F(PlanTest, MaxAttemptsCapsTheWholeTree) {
  load(
      "  - alias: x\n"
      "    targets: [{provider: a, model: m}, {provider: b, model: m}, {provider: c, model: m}]\n"
      "    retry: { max_attempts: 2 }\n");
  AttemptPlan plan(policy_, clock_.now(), 1);
  plan.first();
  EXPECT_TRUE(plan.after_failure(status(503), clock_.now()));
  EXPECT_FALSE(plan.after_failure(status(503), clock_.now()));
  EXPECT_EQ(plan.stop_reason(), "attempts exhausted");
}

struct Facts final : RequestFacts {
  std::string key_name;
  std::string group;
  std::map<std::string, std::string> headers;
  bool streaming = false;
  std::optional<std::uint64_t> limit;
  std::string_view key() const override { return key_name; }
  std::string_view key_group() const override { return group; }
  std::optional<std::string_view> header(std::string_view name) const override {
    auto it = headers.find(std::string(name));
    return it == headers.end() ? std::nullopt : std::optional<std::string_view>(it->second);
  }
  bool stream() const override { return streaming; }
  std::optional<std::uint64_t> max_tokens() const override { return limit; }
  std::vector<std::string> found;  // "policy" and "policy/detector" of each input find
  bool guardrails_found(std::string_view name) const override {
    return name.empty() ? !found.empty()
                        : std::find(found.begin(), found.end(), name) != found.end();
  }
};

TEST_F(PlanTest, ConditionalTestsWhatTheGuardrailsFound) {
  load(
      "  - alias: x\n"
      "    guardrails: [health, pii]\n"
      "    policy:\n"
      "      conditional:\n"
      "        rules:\n"
      "          - when: { guardrails: health }\n"
      "            then: { provider: a, model: m }\n"
      "          - when: { guardrails: { in: [pii/us_ssn] } }\n"
      "            then: { provider: b, model: m }\n"
      "          - when: { guardrails: { exists: true } }\n"
      "            then: { provider: c, model: m }\n"
      "        default: { provider: d, model: m }\n",
      "guardrails:\n"
      "  policies:\n"
      "    - { name: health, detectors: [{ keywords: [diagnosis], name: medical, action: flag }] "
      "}\n"
      "    - { name: pii, detectors: [{ builtin: pii, action: redact }] }\n");
  auto plan_for = [&](const Facts& f) {
    AttemptPlan plan(policy_, clock_.now(), 1, &f);
    return order(plan);
  };
  Facts f;
  EXPECT_EQ(plan_for(f), "d") << "nothing found";
  f.found = {"pii", "pii/email"};
  EXPECT_EQ(plan_for(f), "c");
  f.found = {"pii", "pii/us_ssn"};
  EXPECT_EQ(plan_for(f), "b");
  f.found = {"pii", "pii/us_ssn", "health", "health/medical"};
  EXPECT_EQ(plan_for(f), "a") << "the first rule that matches, and only its branch";
}

TEST(PlanConfig, ARuleOnAGuardrailPolicyTheRouteDoesNotApplyIsRefused) {
  const std::string yaml =
      "version: 1\nauth: none\n"
      "guardrails:\n"
      "  policies:\n"
      "    - { name: health, detectors: [{ keywords: [diagnosis], name: medical, action: flag }] "
      "}\n"
      "providers: [{ id: a, adapter: mock }, { id: b, adapter: mock }]\n"
      "routes:\n"
      "  - alias: x\n"
      "    policy:\n"
      "      conditional:\n"
      "        rules: [{ when: { guardrails: health/medical }, then: { provider: a, model: m } }]\n"
      "        default: { provider: b, model: m }\n";
  auto loaded = providers::load_config_string(yaml, "test.yaml");
  ASSERT_FALSE(loaded);
  EXPECT_NE(loaded.error().message().find(
                "tests guardrail policy \"health\", which this route does not apply"),
            std::string::npos)
      << loaded.error().message();
}

TEST_F(PlanTest, ConditionalTestsTheKeysGroup) {
  load(
      "  - alias: x\n"
      "    policy:\n"
      "      conditional:\n"
      "        rules:\n"
      "          - when: { key_group: { in: [research, eval] } }\n"
      "            then: { provider: a, model: m }\n"
      "          - when: { key_group: { exists: false } }\n"
      "            then: { provider: b, model: m }\n"
      "        default: { provider: c, model: m }\n");
  auto plan_for = [&](const Facts& f) {
    AttemptPlan plan(policy_, clock_.now(), 1, &f);
    return order(plan);
  };
  Facts f;
  EXPECT_EQ(plan_for(f), "b") << "a key without a group";
  f.group = "eval";
  EXPECT_EQ(plan_for(f), "a");
  f.group = "product";
  EXPECT_EQ(plan_for(f), "c");
}

TEST_F(PlanTest, ConditionalTakesTheFirstMatchingRuleElseTheDefault) {
  load(
      "  - alias: x\n"
      "    policy:\n"
      "      conditional:\n"
      "        rules:\n"
      "          - when: { key: { in: [batch, nightly] } }\n"
      "            then: { provider: a, model: m }\n"
      "          - when: { stream: true, max_tokens: { gt: 4000 } }\n"
      "            then: { provider: b, model: m }\n"
      "          - when: { headers: { X-Tier: gold } }\n"
      "            then:\n"
      "              fallback: { targets: [{provider: c, model: m}, {provider: a, model: m}] }\n"
      "        default: { provider: d, model: m }\n");
  EXPECT_EQ(policy_.paths, (std::vector<std::string>{"0", "1", "2.0", "2.1", "3"}));
  auto plan_for = [&](const Facts& f) {
    AttemptPlan plan(policy_, clock_.now(), 1, &f);
    return order(plan);
  };
  Facts f;
  EXPECT_EQ(plan_for(f), "d");
  f.key_name = "nightly";
  EXPECT_EQ(plan_for(f), "a");
  f.key_name = "interactive";
  f.streaming = true;
  f.limit = 4000;
  EXPECT_EQ(plan_for(f), "d") << "every test of a rule must pass: 4000 is not > 4000";
  f.limit = 4001;
  EXPECT_EQ(plan_for(f), "b");
  f.streaming = false;
  f.headers["x-tier"] = "gold";
  EXPECT_EQ(plan_for(f), "ca") << "a branch keeps its own fallback";
  AttemptPlan no_facts(policy_, clock_.now(), 1);
  EXPECT_EQ(order(no_facts), "d");
}

TEST_F(PlanTest, NestedFallbackOverALoadBalancedPool) {
  load(
      "  - alias: x\n"
      "    policy:\n"
      "      fallback:\n"
      "        targets:\n"
      "          - loadbalance:\n"
      "              targets:\n"
      "                - { provider: a, model: m, weight: 1 }\n"
      "                - { provider: b, model: m, weight: 1 }\n"
      "          - { provider: c, model: m }\n");
  EXPECT_EQ(policy_.paths, (std::vector<std::string>{"0.0", "0.1", "1"}));
  std::map<std::string, int> seen;
  for (std::uint64_t seed = 0; seed < 200; ++seed) {
    AttemptPlan plan(policy_, clock_.now(), seed * 31 + 7);
    const std::string o = order(plan);
    EXPECT_EQ(o.back(), 'c');
    ++seen[o];
  }
  EXPECT_GT(seen["abc"], 0);
  EXPECT_GT(seen["bac"], 0);
}

}  // namespace
}  // namespace sluice::routing
