// SharedLimits compiles one plan per (config version, key set revision): store keys' limits
// are in the plan of their key set, prepared off the request path, and an older key set than
// the plan's never sends the plan back in time.
#include <memory>

#include <gtest/gtest.h>

#include "pipeline/limits_admission.h"
#include "pipeline/snapshot.h"
#include "providers/registry.h"
#include "tenancy/key_set.h"

namespace sluice::pipeline {
namespace {

std::shared_ptr<const Snapshot> snapshot() {
  auto cfg = providers::load_config_string(R"y(version: 1
providers:
  - { id: mock, adapter: mock }
routes:
  - { alias: chat, provider: mock, model: m }
store: { sqlite: unused.db }
limits:
  key: { rpm: 100 }
)y",
                                           "test.yaml");
  EXPECT_TRUE(cfg) << (cfg ? "" : cfg.error().message());
  auto snap = Snapshot::build(*cfg);
  EXPECT_TRUE(snap) << (snap ? "" : snap.error().message());
  return *snap;
}

std::shared_ptr<const tenancy::KeySet> key_set(std::uint64_t revision, std::uint64_t group_rpm) {
  store::TenancyState state;
  state.revision = revision;
  store::KeyGroup g;
  g.name = "team";
  g.quota.rpm = group_rpm;
  state.groups = {g};
  store::ApiKey k;
  k.id = "key_1";
  k.name = "alice";
  k.group = "team";
  k.sha256_hex = std::string(64, 'a');
  state.keys = {k};
  return tenancy::KeySet::build(state);
}

// The requests-per-minute limit of `set`'s key's group in `plan` (0: none).
std::uint64_t group_rpm(const limits::LimitPlan& plan, const tenancy::KeySet& set) {
  for (const limits::Charge& c : plan.charges(&set.keys()[0].key, "chat", "", 1)) {
    if (c.bucket->layer == limits::Layer::kGroup &&
        c.bucket->dimension == limits::Dimension::kRequests) {
      return c.bucket->limit;
    }
  }
  return 0;
}

TEST(SharedLimitsTest, APreparedKeySetIsInThePlanBeforeAnyRequestAsks) {
  SharedLimits shared(snapshot()->config(), nullptr);
  const auto snap = snapshot();
  const auto first = shared.plan_for(snap);
  EXPECT_EQ(first->owner(), nullptr);
  const auto set = key_set(1, 3);
  shared.prepare(set);
  const auto plan = shared.plan_for(snap, set);
  EXPECT_NE(plan, first);
  EXPECT_EQ(plan->owner(), set.get());
  EXPECT_EQ(group_rpm(*plan, *set), 3u);
  EXPECT_EQ(shared.plan_for(snap, set), plan) << "built once, by prepare";
  EXPECT_EQ(shared.plan_for(snap), plan) << "config keys share the same plan";
}

TEST(SharedLimitsTest, AnOlderKeySetKeepsTheNewerPlan) {
  SharedLimits shared(snapshot()->config(), nullptr);
  const auto snap = snapshot();
  const auto older = key_set(1, 3);
  const auto newer = key_set(2, 5);
  const auto plan = shared.plan_for(snap, newer);
  EXPECT_EQ(group_rpm(*plan, *newer), 5u);
  // A request that authenticated against the older set: same plan, its key found by name.
  const auto again = shared.plan_for(snap, older);
  EXPECT_EQ(again, plan);
  EXPECT_EQ(group_rpm(*again, *older), 5u);
  shared.prepare(older);
  EXPECT_EQ(shared.plan_for(snap), plan) << "prepare never goes back in revision";
}

TEST(SharedLimitsTest, KeysPreparedBeforeTheFirstConfigAreInItsPlan) {
  SharedLimits shared(snapshot()->config(), nullptr);
  const auto set = key_set(7, 4);
  shared.prepare(set);  // the directory's first load can beat the first request
  const auto plan = shared.plan_for(snapshot());
  EXPECT_EQ(plan->owner(), set.get());
  EXPECT_EQ(group_rpm(*plan, *set), 4u);
}

}  // namespace
}  // namespace sluice::pipeline
