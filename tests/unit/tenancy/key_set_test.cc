#include "tenancy/key_set.h"

#include <limits>

#include <gtest/gtest.h>

#include "tenancy/name_collision.h"

namespace sluice::tenancy {
namespace {

std::string hash_of(char c) { return std::string(64, c); }

store::ApiKey api_key(std::string name, std::string group, char hash) {
  store::ApiKey k;
  k.id = "key_" + name;
  k.name = std::move(name);
  k.group = std::move(group);
  k.sha256_hex = hash_of(hash);
  return k;
}

store::TenancyState sample_state() {
  store::TenancyState state;
  state.revision = 7;
  store::KeyGroup research;
  research.name = "research";
  research.allowed_aliases = {"chat", "embed"};
  research.quota = {100, 5000, 3};
  store::Budget budget;
  budget.amount_micros = 10'000;
  research.budget = budget;
  store::KeyGroup frozen;
  frozen.name = "frozen";
  frozen.disabled = true;
  state.groups = {research, frozen};
  store::ApiKey a = api_key("a", "research", 'a');
  a.quota = {7, 70, 0};
  store::ApiKey b = api_key("b", "research", 'b');
  b.allowed_aliases = {"chat"};
  b.allocation_micros = 4'000;
  store::ApiKey revoked = api_key("r", "research", 'c');
  revoked.status = store::KeyStatus::kRevoked;
  revoked.allocation_micros = 1'000;  // a revoked key's allocation goes back to the pool
  store::ApiKey disabled = api_key("d", "research", 'd');
  disabled.status = store::KeyStatus::kDisabled;
  store::ApiKey expiring = api_key("e", "research", 'e');
  expiring.expires_at_ms = 5'000;
  store::ApiKey in_frozen = api_key("f", "frozen", 'f');
  state.keys = {a, b, revoked, disabled, expiring, in_frozen};
  return state;
}

KeySet::Accounts test_accounts() {
  KeySet::Accounts accounts;
  accounts.group = [](const store::KeyGroup& g) {
    return std::make_shared<BudgetAccount>(BudgetAccount::Kind::kGroup, g.name, g.name, *g.budget,
                                           g.budget->amount_micros, TimeZone());
  };
  accounts.pool = [](const store::KeyGroup& g, std::int64_t cap) {
    return std::make_shared<BudgetAccount>(BudgetAccount::Kind::kPool, g.name, g.name, *g.budget,
                                           cap, TimeZone());
  };
  accounts.key = [](const store::KeyGroup& g, const store::ApiKey& k) {
    return std::make_shared<BudgetAccount>(BudgetAccount::Kind::kKey, k.name, g.name, *g.budget,
                                           *k.allocation_micros, TimeZone());
  };
  return accounts;
}

TEST(KeySetTest, VerdictsForEveryStatus) {
  auto set = KeySet::build(sample_state());
  EXPECT_EQ(set->revision(), 7u);
  EXPECT_EQ(set->size(), 6u);
  const std::int64_t now = 1'000;
  EXPECT_EQ(set->find(hash_of('a'), now).verdict, KeyVerdict::kActive);
  EXPECT_EQ(set->find(hash_of('c'), now).verdict, KeyVerdict::kRevoked);
  EXPECT_EQ(set->find(hash_of('d'), now).verdict, KeyVerdict::kDisabled);
  EXPECT_EQ(set->find(hash_of('e'), 4'999).verdict, KeyVerdict::kActive);
  EXPECT_EQ(set->find(hash_of('e'), 5'000).verdict, KeyVerdict::kExpired);
  EXPECT_EQ(set->find(hash_of('f'), now).verdict, KeyVerdict::kGroupDisabled);
  const KeySet::Found unknown = set->find(hash_of('9'), now);
  EXPECT_EQ(unknown.verdict, KeyVerdict::kUnknown);
  EXPECT_EQ(unknown.key, nullptr);
  EXPECT_EQ(set->find("short", now).verdict, KeyVerdict::kUnknown);
}

TEST(KeySetTest, KeysLookLikeConfigKeys) {
  auto set = KeySet::build(sample_state());
  const StoreKey* a = set->find(hash_of('a'), 0).key;
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->key.name, "a");
  EXPECT_EQ(a->key.group, "research");
  EXPECT_EQ(a->key.sha256_hex, hash_of('a'));
  // No list of its own: the group's.
  EXPECT_EQ(a->key.allowed_aliases, (std::vector<std::string>{"chat", "embed"}));
  EXPECT_EQ(a->key_quota.rpm, 7u);
  EXPECT_EQ(a->key_quota.tpm, 70u);
  EXPECT_EQ(a->group_quota.concurrency, 3u);
  const StoreKey* b = set->find(hash_of('b'), 0).key;
  EXPECT_EQ(b->key.allowed_aliases, (std::vector<std::string>{"chat"}));
  EXPECT_EQ(b->budget, nullptr) << "no accounts given: no budgets";
}

TEST(KeySetTest, RefusalsSayWhyOnlyToTheKeysHolder) {
  auto set = KeySet::build(sample_state());
  const KeySet::Found revoked = set->find(hash_of('c'), 0);
  EXPECT_EQ(key_refused(revoked.verdict, revoked.key).message(), "API key revoked");
  EXPECT_EQ(key_refused(revoked.verdict, revoked.key).code(), "key_revoked");
  EXPECT_EQ(key_refused(revoked.verdict, revoked.key).http_status(), 401);
  const KeySet::Found frozen = set->find(hash_of('f'), 0);
  EXPECT_EQ(key_refused(frozen.verdict, frozen.key).message(),
            "API key's key group frozen is disabled");
  const Error unknown = key_refused(KeyVerdict::kUnknown, nullptr);
  EXPECT_EQ(unknown.message(), "invalid API key");
  EXPECT_EQ(unknown.code(), "invalid_api_key");
}

TEST(KeySetTest, AllocatedKeysSpendTheirOwnAccountOthersThePool) {
  auto set = KeySet::build(sample_state(), test_accounts());
  // research: its whole account, its pool, and b's allocation (the revoked key's is released).
  ASSERT_EQ(set->accounts().size(), 3u);
  const StoreKey* a = set->find(hash_of('a'), 0).key;
  const StoreKey* b = set->find(hash_of('b'), 0).key;
  ASSERT_NE(a->budget, nullptr);
  ASSERT_NE(b->budget, nullptr);
  EXPECT_EQ(a->budget->kind(), BudgetAccount::Kind::kPool);
  EXPECT_EQ(a->budget->cap_micros(), 6'000);  // 10 000 minus b's 4 000
  EXPECT_EQ(b->budget->kind(), BudgetAccount::Kind::kKey);
  EXPECT_EQ(b->budget->cap_micros(), 4'000);
  EXPECT_EQ(a->charge_to[0], a->budget);
  EXPECT_EQ(a->charge_to[1]->kind(), BudgetAccount::Kind::kGroup);
  EXPECT_EQ(a->charge_to[1], b->charge_to[1]) << "one group account for both";
  EXPECT_EQ(set->find(hash_of('f'), 0).key->budget, nullptr) << "frozen has no budget";
}

// Allocations summing beyond int64 (a store edited by hand: the admin rules refuse them) leave
// the pool nothing, instead of wrapping to a pool larger than the budget.
TEST(KeySetTest, APoolNeverGrowsFromAllocationsBeyondInt64) {
  store::TenancyState state = sample_state();
  for (store::ApiKey& k : state.keys) {
    if (k.group == "research" && k.status != store::KeyStatus::kRevoked) {
      k.allocation_micros = std::numeric_limits<std::int64_t>::max();
    }
  }
  state.keys.push_back(api_key("plain", "research", 'p'));
  auto set = KeySet::build(state, test_accounts());
  const StoreKey* plain = set->find(hash_of('p'), 0).key;
  ASSERT_NE(plain, nullptr);
  ASSERT_NE(plain->budget, nullptr);
  EXPECT_EQ(plain->budget->kind(), BudgetAccount::Kind::kPool);
  EXPECT_LE(plain->budget->cap_micros(), 0);
}

// One name, one key: a store key named like a key of the config file is refused (saying why to
// the holder of its secret), and a config key that would take a store key's name is found with
// what the refusal needs to say which keys they are.
TEST(KeySetTest, AStoreKeyNamedLikeAConfigKeyIsRefused) {
  auto set = KeySet::build(sample_state(), {}, {"a", "elsewhere"});
  const KeySet::Found a = set->find(hash_of('a'), 0);
  EXPECT_EQ(a.verdict, KeyVerdict::kNameTaken);
  const Error refused = key_refused(a.verdict, a.key);
  EXPECT_EQ(refused.code(), "key_name_taken");
  EXPECT_EQ(refused.message(),
            "API key's name a is also a config-file key's: refused until the store key is renamed");
  EXPECT_EQ(set->find(hash_of('b'), 0).verdict, KeyVerdict::kActive);

  config::Key dev;
  dev.name = "dev";
  dev.source = "sluice.yaml:12";
  config::Key clash = dev;
  clash.name = "r";  // revoked: its name is still its own
  clash.source = "sluice.yaml:15";
  auto found = find_name_collision({dev, clash}, set.get());
  ASSERT_TRUE(found);
  EXPECT_EQ(found->name, "r");
  EXPECT_EQ(found->config_source, "sluice.yaml:15");
  EXPECT_EQ(found->store_key_id, "key_r");
  EXPECT_EQ(found->store_group, "research");
  EXPECT_EQ(describe(*found),
            "key name r (sluice.yaml:15) is the store key key_r's, in key group research");
  EXPECT_FALSE(find_name_collision({dev}, set.get()));
  config::Key kept = dev;
  kept.name = "a";
  EXPECT_FALSE(find_name_collision({kept}, set.get()))
      << "the running config has it and the store key is refused already: no new collision";
  EXPECT_FALSE(find_name_collision({clash}, nullptr)) << "no key set loaded yet";
}

TEST(KeySetHolderTest, PublishesAtomically) {
  KeySetHolder holder;
  EXPECT_EQ(holder.current(), nullptr);
  auto set = KeySet::build(sample_state());
  holder.publish(set);
  EXPECT_EQ(holder.current(), set);
}

}  // namespace
}  // namespace sluice::tenancy
