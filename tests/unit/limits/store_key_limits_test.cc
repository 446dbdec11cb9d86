// Limits of keys from outside the config (store keys, LimitPlan's ExtraKey): which limit each
// layer takes, and that buckets keep their level when the plan is rebuilt for a new key set.
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/clock.h"
#include "limits/limit_plan.h"
#include "limits/local_limiter.h"
#include "test_config.h"

namespace sluice::limits {
namespace {

// A store key as the key set holds it: the key and the quotas of its record and its group.
struct StoreKey {
  config::Key key;
  config::RateLimits key_quota;
  config::RateLimits group_quota;
};

StoreKey store_key(std::string name, std::string group, std::uint64_t key_rpm,
                   std::uint64_t group_rpm) {
  StoreKey k;
  k.key.id = "key_" + name;
  k.key.name = std::move(name);
  k.key.group = std::move(group);
  k.key_quota.rpm = key_rpm;
  k.group_quota.rpm = group_rpm;
  return k;
}

// With a store, `limits:` may name keys and groups the config does not list.
std::shared_ptr<const config::Config> load(const std::string& limits) {
  return load_test_config("store: { sqlite: unused.db }\n" + limits);
}

std::vector<ExtraKey> extra(const std::vector<StoreKey>& keys) {
  std::vector<ExtraKey> out;
  for (const StoreKey& k : keys) {
    out.push_back({&k.key, &k.key_quota, &k.group_quota});
  }
  return out;
}

class StoreKeyLimitsTest : public ::testing::Test {
 protected:
  // Sends requests until one is refused (at most `max`); returns how many were admitted and
  // leaves the refusal in `refused`.
  int admitted_until_refused(const LimitPlan& plan, const config::Key& key, int max = 20) {
    for (int i = 0; i < max; ++i) {
      Lease lease;
      const Decision d = limiter.decide(plan.charges(&key, "chat", "mock", 1), clock.now(), lease);
      limiter.release(lease);
      if (d.status != Decision::Status::kOk) {
        refused = d;
        return i;
      }
    }
    return max;
  }

  SimulatedClock clock;
  LocalLimiter limiter;
  Decision refused;
};

TEST_F(StoreKeyLimitsTest, ConfigEntryForTheKeyNameBeatsTheKeysOwnQuota) {
  const std::vector<StoreKey> keys = {store_key("alice", "team", 5, 0)};
  LimitPlan plan(load("limits: { key: { rpm: 100 }, keys: { alice: { rpm: 2 } } }\n"), limiter,
                 extra(keys));
  EXPECT_EQ(admitted_until_refused(plan, keys[0].key), 2);
  ASSERT_NE(refused.limited, nullptr);
  EXPECT_EQ(refused.limited->layer, Layer::kKey);
  EXPECT_EQ(refused.limited->name, "alice");
  EXPECT_EQ(refused.limited->limit, 2u);
}

TEST_F(StoreKeyLimitsTest, KeysOwnQuotaBeatsTheDefaultKeyLimit) {
  const std::vector<StoreKey> keys = {store_key("alice", "team", 3, 0)};
  LimitPlan plan(load("limits: { key: { rpm: 100 } }\n"), limiter, extra(keys));
  EXPECT_EQ(admitted_until_refused(plan, keys[0].key), 3);
  ASSERT_NE(refused.limited, nullptr);
  EXPECT_EQ(refused.limited->layer, Layer::kKey);
  EXPECT_EQ(refused.limited->limit, 3u);
}

TEST_F(StoreKeyLimitsTest, DefaultKeyLimitAppliesToAKeyWithoutQuota) {
  const std::vector<StoreKey> keys = {store_key("alice", "team", 0, 0)};
  LimitPlan plan(load("limits: { key: { rpm: 2 } }\n"), limiter, extra(keys));
  EXPECT_EQ(admitted_until_refused(plan, keys[0].key), 2);
  ASSERT_NE(refused.limited, nullptr);
  EXPECT_EQ(refused.limited->layer, Layer::kKey);
  EXPECT_EQ(refused.limited->name, "alice");
}

TEST_F(StoreKeyLimitsTest, ConfigEntryForTheGroupBeatsTheStoreGroupQuota) {
  const std::vector<StoreKey> keys = {store_key("alice", "team", 0, 10),
                                      store_key("bob", "team", 0, 10)};
  LimitPlan plan(load("limits: { groups: { team: { rpm: 3 } } }\n"), limiter, extra(keys));
  // The group's buckets are shared by its keys.
  EXPECT_EQ(admitted_until_refused(plan, keys[0].key, 2), 2);
  EXPECT_EQ(admitted_until_refused(plan, keys[1].key), 1);
  ASSERT_NE(refused.limited, nullptr);
  EXPECT_EQ(refused.limited->layer, Layer::kGroup);
  EXPECT_EQ(refused.limited->name, "team");
  EXPECT_EQ(refused.limited->limit, 3u);
}

TEST_F(StoreKeyLimitsTest, StoreGroupQuotaAppliesWithoutAnyLimitsSection) {
  const std::vector<StoreKey> keys = {store_key("alice", "team", 0, 3),
                                      store_key("bob", "team", 0, 3)};
  LimitPlan plan(load(""), limiter, extra(keys));
  EXPECT_FALSE(plan.empty());
  EXPECT_EQ(admitted_until_refused(plan, keys[0].key, 2), 2);
  EXPECT_EQ(admitted_until_refused(plan, keys[1].key), 1);
  ASSERT_NE(refused.limited, nullptr);
  EXPECT_EQ(refused.limited->layer, Layer::kGroup);
  EXPECT_EQ(refused.limited->dimension, Dimension::kRequests);
  EXPECT_EQ(refused.limited->name, "team");
}

TEST_F(StoreKeyLimitsTest, NoLimitsAndNoQuotasLeaveThePlanEmpty) {
  const std::vector<StoreKey> keys = {store_key("alice", "team", 0, 0)};
  LimitPlan plan(load(""), limiter, extra(keys));
  EXPECT_TRUE(plan.empty());
  EXPECT_TRUE(plan.charges(&keys[0].key, "chat", "mock", 1).empty());
}

TEST_F(StoreKeyLimitsTest, ConfigKeysAreNotLimitedByAStoreGroupQuotaOfTheSameName) {
  // `dev` (config) is in group research; a store group research with a quota limits only the
  // store keys (the config's keys take their group limits from the config alone).
  const std::vector<StoreKey> keys = {store_key("alice", "research", 0, 1)};
  LimitPlan plan(load(""), limiter, extra(keys));
  EXPECT_EQ(admitted_until_refused(plan, plan.config().keys[0], 5), 5);
  EXPECT_EQ(admitted_until_refused(plan, keys[0].key), 1);
}

TEST_F(StoreKeyLimitsTest, KeyOfAnotherKeySetRevisionIsFoundById) {
  const std::vector<StoreKey> keys = {store_key("alice", "team", 2, 0)};
  LimitPlan plan(load(""), limiter, extra(keys));
  StoreKey older = store_key("alice", "team", 2, 0);  // same key, another address
  older.key.name = "alice-before-a-rename";
  EXPECT_EQ(admitted_until_refused(plan, older.key), 2);
  ASSERT_NE(refused.limited, nullptr);
  EXPECT_EQ(refused.limited->name, "alice");
}

// Buckets are the key's id's: a store key that takes a config key's name (another group) does
// not drain the config key's bucket, and a renamed store key keeps its own.
TEST_F(StoreKeyLimitsTest, KeysOfTheSameNameNeverShareABucket) {
  auto config = load("limits: { key: { rpm: 2 } }\n");
  const config::Key& dev = config->keys[0];
  std::vector<StoreKey> keys = {store_key(dev.name, "elsewhere", 0, 0)};
  LimitPlan plan(config, limiter, extra(keys));
  EXPECT_EQ(admitted_until_refused(plan, keys[0].key), 2);
  EXPECT_EQ(admitted_until_refused(plan, plan.config().keys[0]), 2) << "its own bucket";
  keys[0].key.name = "renamed";
  LimitPlan renamed(config, limiter, extra(keys));
  EXPECT_EQ(admitted_until_refused(renamed, keys[0].key), 0) << "the same bucket, still empty";
}

TEST_F(StoreKeyLimitsTest, RebuildForANewKeySetKeepsTheBucketLevel) {
  const std::vector<StoreKey> before = {store_key("alice", "team", 2, 0)};
  auto config = load("");
  LimitPlan first(config, limiter, extra(before));
  EXPECT_EQ(admitted_until_refused(first, before[0].key), 2);
  const std::vector<StoreKey> after = {store_key("alice", "team", 2, 0),
                                       store_key("carol", "team", 2, 0)};
  LimitPlan second(config, limiter, extra(after));
  EXPECT_EQ(admitted_until_refused(second, after[0].key), 0);  // still empty
  EXPECT_EQ(admitted_until_refused(second, after[1].key), 2);  // a new key starts full
  clock.advance(std::chrono::seconds(30));                     // rpm 2: one token per 30 s
  EXPECT_EQ(admitted_until_refused(second, after[0].key), 1);
}

}  // namespace
}  // namespace sluice::limits
