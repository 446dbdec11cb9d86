// `sluice routes`: the printed policy tree (paths, strategies, weights, effective timeouts),
// the retry settings and the worst-case latency bound.

#include "config/routes_report.h"

#include <string>

#include <gtest/gtest.h>

#include "providers/registry.h"

namespace sluice::config {
namespace {

// A fallback over a weighted pool (a failover-only member with its own timeout), then a
// third target; the route's timeout covers the targets without their own.
constexpr char kNested[] = R"y(version: 1
auth: none
providers:
  - id: a
    adapter: mock
    timeout: { first_byte_ms: 1000, total_ms: 5000 }
  - { id: b, adapter: mock }
  - { id: c, adapter: mock }
routes:
  - alias: [chat, chat-2]
    policy:
      fallback:
        on_status: [429, 503]
        targets:
          - loadbalance:
              strategy: weighted
              targets:
                - { provider: a, model: m, weight: 3 }
                - { provider: b, model: m, weight: 0, timeout: { first_byte_ms: 500, total_ms: 2000 } }
          - { provider: c, model: m }
    retry: { per_target_attempts: 2, backoff_base_ms: 100, backoff_max_ms: 400, retry_after_max_ms: 300, deadline_ms: 10000 }
    timeout: { first_byte_ms: 1000, total_ms: 4000 }
  - alias: solo
    provider: c
    model: m
)y";

std::shared_ptr<const Config> load_ok(const std::string& yaml) {
  auto loaded = providers::load_config_string(yaml, "test.yaml");
  if (!loaded) {
    ADD_FAILURE() << loaded.error().message();
    return std::make_shared<const Config>();
  }
  return *loaded;
}

TEST(RoutesReportTest, PrintsTheTreeTheRetrySettingsAndTheBound) {
  const auto config = load_ok(kNested);
  EXPECT_EQ(describe_routes(*config),
            "test.yaml: version 1, 2 routes\n"
            "\n"
            "route chat, chat-2 (chat, test.yaml:10)\n"
            "  policy:\n"
            "    fallback  on_status 429,503\n"
            "      [0] loadbalance  strategy weighted\n"
            "        [0.0] target a/m  weight 3\n"
            "              timeout connect 2000 ms, first_byte 1000 ms, idle 300000 ms, total "
            "4000 ms (route)\n"
            "        [0.1] target b/m  weight 0 (failover only)\n"
            "              timeout connect 2000 ms, first_byte 500 ms, idle 300000 ms, total "
            "2000 ms (target)\n"
            "      [1] target c/m\n"
            "          timeout connect 2000 ms, first_byte 1000 ms, idle 300000 ms, total 4000 ms "
            "(route)\n"
            "  retry: max_attempts 0 (= 3 targets x 2 = 6), per_target_attempts 2, backoff "
            "100..400 ms (full jitter), retry_after_max 300 ms, budget_ratio 0.1, budget_burst "
            "10, deadline_ms 10000\n"
            "  worst case: 10000 ms\n"
            "    longest chain: 6 attempts, 20900 ms of timeouts and backoffs\n"
            "    deadline: 10000 ms (retry.deadline_ms) bounds every attempt together (each gets "
            "only the time left)\n"
            "\n"
            "route solo (chat, test.yaml:23)\n"
            "  policy:\n"
            "    target c/m\n"
            "    timeout connect 2000 ms, first_byte 60000 ms, idle 300000 ms, total 600000 ms "
            "(provider)\n"
            "  retry: max_attempts 0 (= 1 target x 1 = 1), per_target_attempts 1, backoff "
            "100..2000 ms (full jitter), retry_after_max 5000 ms, budget_ratio 0.1, budget_burst "
            "10, deadline_ms 0 (= longest target total, 600000 ms)\n"
            "  worst case: 600000 ms\n"
            "    longest chain: 1 attempt, 600000 ms of timeouts and backoffs\n"
            "\n"
            "note: auth is disabled (auth: none): every caller is accepted without a key; use "
            "only for local development\n");
}

// Every kind of test a conditional rule can hold is named in the printed tree.
TEST(RoutesReportTest, ConditionalRulesNameEachTest) {
  const auto config = load_ok(R"y(version: 1
auth: none
providers:
  - { id: a, adapter: mock }
routes:
  - alias: chat
    policy:
      conditional:
        rules:
          - when: { key: { in: [batch, nightly] } }
            then: { provider: a, model: m1 }
          - when: { key_group: research }
            then: { provider: a, model: m2 }
          - when: { key_group: { exists: false }, stream: true, max_tokens: { gt: 4000 } }
            then: { provider: a, model: m3 }
          - when: { headers: { x-tier: gold } }
            then: { provider: a, model: m4 }
        default: { provider: a, model: m5 }
)y");
  const std::string text = describe_routes(*config);
  EXPECT_NE(text.find("when key in [batch, nightly]"), std::string::npos) << text;
  EXPECT_NE(text.find("when key_group = research"), std::string::npos) << text;
  EXPECT_NE(text.find("when key_group absent, stream = true, max_tokens > 4000"), std::string::npos)
      << text;
  EXPECT_NE(text.find("when header x-tier = gold"), std::string::npos) << text;
  EXPECT_NE(text.find("default"), std::string::npos) << text;
}

TEST(RoutesReportTest, TheBoundAddsEveryAttemptAndTheLongestWaitBeforeEachRetry) {
  const auto config = load_ok(kNested);
  // Every target twice (4000, 2000 and 4000 ms totals), a 300 ms wait (retry_after_max, above
  // the 100 ms backoff ceiling) before each second attempt: 2 * 10000 + 3 * 300.
  const LatencyBound bound = worst_case_latency(*config, config->routes.front());
  EXPECT_EQ(bound.max_attempts, 6u);
  EXPECT_EQ(bound.chain, Millis(20900));
  EXPECT_EQ(bound.deadline, Millis(10000));
  EXPECT_TRUE(bound.deadline_configured);
  EXPECT_EQ(bound.longest_attempt, Millis(4000));
  EXPECT_EQ(bound.worst, Millis(10000));  // the deadline: an attempt gets only the time left
}

TEST(RoutesReportTest, MaxAttemptsCutsTheChainWhereTheTreeAllows) {
  std::string yaml = kNested;
  yaml.replace(yaml.find("per_target_attempts: 2"), 22, "per_target_attempts: 2, max_attempts: 3");
  const auto config = load_ok(yaml);
  // The pool may go a, a, b (4000 + 300 + 4000 + 2000) but never reaches c within three
  // attempts unless both pool members were tried once each (4000 + 2000 + 4000 = 10000).
  const LatencyBound bound = worst_case_latency(*config, config->routes.front());
  EXPECT_EQ(bound.max_attempts, 3u);
  EXPECT_EQ(bound.chain, Millis(10300));
  EXPECT_EQ(bound.worst, Millis(10000)) << "deadline_ms 10000 bounds it";
}

TEST(RoutesReportTest, BackoffCeilingsDoubleUpToTheirCap) {
  const auto config = load_ok(R"y(version: 1
auth: none
providers:
  - { id: a, adapter: mock, timeout: { first_byte_ms: 100, total_ms: 1000 } }
routes:
  - alias: x
    provider: a
    model: m
    retry: { per_target_attempts: 4, backoff_base_ms: 100, backoff_max_ms: 300, retry_after_max_ms: 0 }
)y");
  // Waits before the 2nd, 3rd and 4th attempt: at most 100, 200, then 300 (capped).
  const LatencyBound bound = worst_case_latency(*config, config->routes.front());
  EXPECT_EQ(bound.max_attempts, 4u);
  EXPECT_EQ(bound.chain, Millis(4 * 1000 + 100 + 200 + 300));
  EXPECT_FALSE(bound.deadline_configured);
  EXPECT_EQ(bound.deadline, Millis(1000));
  EXPECT_EQ(bound.worst, Millis(1000)) << "retries share the one total timeout";
}

TEST(RoutesReportTest, EffectiveTimeoutsPreferTheTargetThenTheRouteThenTheProvider) {
  const auto config = load_ok(kNested);
  const Route& nested = config->routes[0];
  const char* from = nullptr;
  EXPECT_EQ(effective_timeouts(*config, nested, 1, &from).total, Millis(2000));
  EXPECT_STREQ(from, "target");
  EXPECT_EQ(effective_timeouts(*config, nested, 0, &from).total, Millis(4000));
  EXPECT_STREQ(from, "route");
  EXPECT_EQ(effective_timeouts(*config, config->routes[1], 0, &from).total, Millis(600000));
  EXPECT_STREQ(from, "provider");
}

}  // namespace
}  // namespace sluice::config
