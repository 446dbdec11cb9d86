#include "limits/local_limiter.h"

#include <memory>

#include <gtest/gtest.h>

#include "core/clock.h"
#include "limits/limit_plan.h"
#include "test_config.h"

namespace sluice::limits {
namespace {

using namespace std::chrono_literals;

std::shared_ptr<const config::Config> load(const std::string& limits) {
  return load_test_config(limits);
}

class LocalLimiterTest : public ::testing::Test {
 protected:
  Decision check(const LimitPlan& plan, const config::Key* key, std::uint64_t tokens,
                 Lease& lease) {
    const Charges charges = plan.charges(key, "chat", "mock", tokens);
    return limiter.decide(charges, clock.now(), lease);
  }
  Decision check(const LimitPlan& plan, std::uint64_t tokens = 1) {
    Lease lease;
    return check(plan, &plan.config().keys[0], tokens, lease);
  }

  SimulatedClock clock;
  LocalLimiter limiter;
};

TEST_F(LocalLimiterTest, BurstThenContinuousRefillWithExactBoundaries) {
  LimitPlan plan(load("limits: { key: { rpm: 60 } }\n"), limiter);
  // A full bucket of 60: the 61st request within the same instant is refused.
  for (int i = 0; i < 60; ++i) {
    const Decision d = check(plan);
    ASSERT_EQ(d.status, Decision::Status::kOk) << i;
    EXPECT_EQ(d.requests.limit, 60u);
    EXPECT_EQ(d.requests.remaining, static_cast<std::uint64_t>(59 - i));
  }
  Decision refused = check(plan);
  ASSERT_EQ(refused.status, Decision::Status::kOverLimit);
  EXPECT_EQ(refused.limited->layer, Layer::kKey);
  EXPECT_EQ(refused.limited->dimension, Dimension::kRequests);
  EXPECT_EQ(refused.retry_after, 1000ms);  // one token a second
  EXPECT_EQ(refused.requests.remaining, 0u);
  // One nanosecond short of a token: still refused; at the token: admitted, exactly one.
  clock.advance(1s - 1ns);
  EXPECT_EQ(check(plan).status, Decision::Status::kOverLimit);
  clock.advance(1ns);
  EXPECT_EQ(check(plan).status, Decision::Status::kOk);
  EXPECT_EQ(check(plan).status, Decision::Status::kOverLimit);
  // A minute refills the whole bucket, never more than it holds.
  clock.advance(10min);
  const Decision full = check(plan);
  EXPECT_EQ(full.requests.remaining, 59u);
  EXPECT_EQ(full.requests.reset, 1000ms);
}

TEST_F(LocalLimiterTest, TokensAreAllOrNoneAndSettle) {
  LimitPlan plan(
      load("limits: { key: { rpm: 100, tpm: 1000 }, groups: { research: { tpm: 600 } } }\n"),
      limiter);
  // The group (600) refuses 700 tokens: the key's buckets give back what they took.
  const Decision big = check(plan, 700);
  ASSERT_EQ(big.status, Decision::Status::kOverLimit);
  EXPECT_TRUE(big.never);  // more than the group's whole bucket
  EXPECT_EQ(big.limited->layer, Layer::kGroup);
  EXPECT_EQ(big.limited->name, "research");
  EXPECT_EQ(big.limited->dimension, Dimension::kTokens);
  const Decision first = check(plan, 500);
  ASSERT_EQ(first.status, Decision::Status::kOk);
  EXPECT_EQ(first.requests.remaining, 99u);  // the refused request took no request either
  EXPECT_EQ(first.tokens.limit, 600u);       // the tightest token bucket: the group's
  EXPECT_EQ(first.tokens.remaining, 100u);
  const Decision second = check(plan, 200);
  ASSERT_EQ(second.status, Decision::Status::kOverLimit);
  EXPECT_EQ(second.retry_after, 10000ms);  // 100 tokens short at 10 a second
  // The call used 100 tokens, not the 500 estimated: 400 come back to every token bucket.
  limiter.correct(plan.token_charges(&plan.config().keys[0], "chat", "mock", -400), clock.now());
  const Decision after = check(plan, 200);
  ASSERT_EQ(after.status, Decision::Status::kOk);
  EXPECT_EQ(after.tokens.remaining, 300u);
  // Usage beyond the estimate is owed: 900 more leaves the group 600 in debt at most.
  limiter.correct(plan.token_charges(&plan.config().keys[0], "chat", "mock", 900), clock.now());
  EXPECT_EQ(check(plan, 1).status, Decision::Status::kOverLimit);
}

TEST_F(LocalLimiterTest, ConcurrencySlotsAreHeldUntilReleased) {
  LimitPlan plan(load("limits: { groups: { research: { concurrency: 2 } }, instance: { "
                      "concurrency: 3 } }\n"),
                 limiter);
  const config::Key* dev = &plan.config().keys[0];
  const config::Key* ops = &plan.config().keys[1];
  Lease a, b, c, d;
  EXPECT_EQ(check(plan, dev, 1, a).status, Decision::Status::kOk);
  EXPECT_EQ(a.slots.size(), 2u);  // instance and group
  EXPECT_EQ(check(plan, dev, 1, b).status, Decision::Status::kOk);
  const Decision refused = check(plan, dev, 1, c);
  ASSERT_EQ(refused.status, Decision::Status::kOverLimit);
  EXPECT_EQ(refused.limited->dimension, Dimension::kConcurrency);
  EXPECT_TRUE(c.empty());
  // The refusal gave back the instance slot it took first: ops (no group) gets the third.
  EXPECT_EQ(check(plan, ops, 1, d).status, Decision::Status::kOk);
  Lease e;
  EXPECT_EQ(check(plan, ops, 1, e).limited->layer, Layer::kInstance);
  limiter.release(a);
  limiter.release(a);  // idempotent
  EXPECT_EQ(check(plan, dev, 1, c).status, Decision::Status::kOk);
}

TEST_F(LocalLimiterTest, ReloadKeepsTheLevelOfBucketsThatStillExist) {
  LimitPlan before(load("limits: { key: { rpm: 2 }, models: { chat: { rpm: 50 } } }\n"), limiter);
  EXPECT_EQ(check(before).status, Decision::Status::kOk);
  EXPECT_EQ(check(before).status, Decision::Status::kOk);
  EXPECT_EQ(check(before).status, Decision::Status::kOverLimit);
  LimitPlan after(load("limits: { key: { rpm: 2 } }\n"), limiter);
  EXPECT_EQ(check(after).status, Decision::Status::kOverLimit);  // not reset by the reload
  clock.advance(30s);
  EXPECT_EQ(check(after).status, Decision::Status::kOk);
}

}  // namespace
}  // namespace sluice::limits
