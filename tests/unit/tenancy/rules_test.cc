#include "tenancy/rules.h"

#include <functional>
#include <limits>
#include <set>

#include <gtest/gtest.h>

#include "config/scalars.h"
#include "tenancy/key_secret.h"

namespace sluice::tenancy {
namespace {

// 2026-11-30T00:00:00Z.
constexpr std::int64_t kNow = 1'795'996'800'000;
constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();

GroupFields budgeted(std::int64_t amount) {
  BudgetFields b;
  b.amount_micros = amount;
  GroupFields f;
  f.budget = b;
  return f;
}

KeyFields named(std::string name) {
  KeyFields f;
  f.name = std::move(name);
  return f;
}

KeyFields allocated(std::string name, std::int64_t micros) {
  KeyFields f = named(std::move(name));
  f.allocation_micros = micros;
  return f;
}

NewKey new_key(KeyFields fields) {
  return NewKey{generate_key_id(), generate_key_secret(), std::move(fields)};
}

// The rules over a state kept between calls, as the store would keep it: each successful change
// becomes the next state.
class RulesTest : public ::testing::Test {
 protected:
  RuleContext context() const { return RuleContext{now_, config_key_named_}; }

  // The change of a rule that must succeed; its state is kept.
  Change ok(RuleResult<Change> r) {
    EXPECT_TRUE(r) << "refused: kind " << static_cast<int>(r.error().kind);
    if (!r) {
      return {};
    }
    state_ = r->state;
    return std::move(*r);
  }
  // The error of a rule that must refuse.
  RuleError refused(RuleResult<Change> r, RuleErrorKind kind) {
    EXPECT_FALSE(r) << "accepted";
    if (r) {
      return {};
    }
    EXPECT_EQ(r.error().kind, kind) << "refused as kind " << static_cast<int>(r.error().kind);
    return r.error();
  }

  void group(std::string_view name, const GroupFields& fields = {}) {
    ok(create_group(state_, context(), name, fields));
  }
  // A new key of `group`; its id.
  std::string key(std::string_view group, KeyFields fields) {
    const NewKey k = new_key(std::move(fields));
    ok(tenancy::create_key(state_, context(), group, k));
    return k.id;
  }
  Change update(std::string_view id, const KeyFields& fields) {
    return ok(update_key(state_, context(), id, fields));
  }
  const store::ApiKey& stored(std::string_view id) { return *find_key(state_, id); }

  std::int64_t now_ = kNow;
  std::function<bool(std::string_view)> config_key_named_ = [](std::string_view name) {
    return name == "from-config";
  };
  store::TenancyState state_;
};

TEST_F(RulesTest, ANewGroupAndKeyTakeTheirDefaultsAndKeepOnlyTheSecretsHash) {
  GroupFields g = budgeted(100'000'000);
  g.rpm = 100;
  g.allowed_aliases = std::vector<std::string>{"chat", "embed"};
  const Change created = ok(create_group(state_, context(), "research", g));
  ASSERT_EQ(created.edits.size(), 1u);
  EXPECT_EQ(std::get<GroupEdit>(created.edits[0]).action, "group.create");
  const store::KeyGroup& research = *find_group(state_, "research");
  ASSERT_TRUE(research.budget);
  EXPECT_EQ(research.budget->period, store::BudgetPeriod::kMonthly);
  EXPECT_EQ(research.budget->mode, store::BudgetMode::kHard);
  EXPECT_EQ(research.budget->time_zone, "UTC");
  EXPECT_EQ(research.budget->starts_at_ms, kNow);
  EXPECT_EQ(research.created_at_ms, kNow);

  KeyFields k = allocated("indexer", 40'000'000);
  k.allowed_aliases = std::vector<std::string>{"chat"};
  k.expires_at_ms = kNow + 1;
  const NewKey indexer = new_key(k);
  const Change made = ok(create_key(state_, context(), "research", indexer));
  ASSERT_EQ(made.edits.size(), 1u);
  const KeyEdit& edit = std::get<KeyEdit>(made.edits[0]);
  EXPECT_EQ(edit.action, "key.create");
  EXPECT_FALSE(edit.before);
  const store::ApiKey& stored_key = stored(indexer.id);
  EXPECT_EQ(stored_key.sha256_hex, config::sha256_hex(indexer.secret));
  EXPECT_EQ(stored_key.prefix, key_prefix(indexer.secret));
  EXPECT_EQ(stored_key.group, "research");
  EXPECT_EQ(stored_key.status, store::KeyStatus::kActive);
  EXPECT_EQ(stored_key.allocation_micros, 40'000'000);
  EXPECT_TRUE(made.spend_caps.empty()) << "a new allocation has nothing spent yet";
}

TEST_F(RulesTest, NamesAreWellFormedUniqueAndNeverAConfigKeys) {
  EXPECT_EQ(
      refused(create_group(state_, context(), "bad name", {}), RuleErrorKind::kInvalidName).name,
      "bad name");
  group("g");
  refused(create_group(state_, context(), "g", {}), RuleErrorKind::kGroupExists);
  const std::string a = key("g", named("a"));
  const RuleError taken =
      refused(create_key(state_, context(), "g", new_key(named("a"))), RuleErrorKind::kNameTaken);
  EXPECT_EQ(taken.holder, a) << "says which key holds the name";
  EXPECT_EQ(taken.group, "g");
  const RuleError config = refused(
      create_key(state_, context(), "g", new_key(named("from-config"))), RuleErrorKind::kNameTaken);
  EXPECT_EQ(config.holder, "") << "a config-file key";
  refused(update_key(state_, context(), a, named("from-config")), RuleErrorKind::kNameTaken);
  refused(update_key(state_, context(), a, named("no/slash")), RuleErrorKind::kInvalidName);
  refused(create_key(state_, context(), "g", new_key(KeyFields{})), RuleErrorKind::kInvalidName);
  refused(create_key(state_, context(), "nope", new_key(named("b"))), RuleErrorKind::kUnknownGroup);
  refused(update_key(state_, context(), "key_missing", {}), RuleErrorKind::kKeyNotFound);
  refused(update_group(state_, context(), "nope", {}), RuleErrorKind::kGroupNotFound);
  const Change renamed = update(a, named("a2"));
  EXPECT_EQ(stored(a).name, "a2");
  EXPECT_EQ(std::get<KeyEdit>(renamed.edits[0]).action, "key.update");
}

TEST_F(RulesTest, AllocationsNeverSumAboveTheGroupBudget) {
  group("g", budgeted(100));
  const std::string a = key("g", allocated("a", 60));
  const RuleError over = refused(create_key(state_, context(), "g", new_key(allocated("b", 50))),
                                 RuleErrorKind::kAllocationExceedsBudget);
  EXPECT_EQ(over.amount_micros, 110);
  EXPECT_EQ(over.cap_micros, 100);
  EXPECT_EQ(state_.keys.size(), 1u) << "a refused rule changes nothing";
  key("g", allocated("b", 40));
  KeyFields more;
  more.allocation_micros = 61;
  refused(update_key(state_, context(), a, more), RuleErrorKind::kAllocationExceedsBudget);
  refused(update_group(state_, context(), "g", budgeted(99)),
          RuleErrorKind::kAllocationExceedsBudget);
  GroupFields no_budget;
  no_budget.budget = std::optional<BudgetFields>();
  refused(update_group(state_, context(), "g", no_budget), RuleErrorKind::kAllocationWithoutBudget);
  ok(update_group(state_, context(), "g", budgeted(150)));
  more.allocation_micros = 110;
  update(a, more);
}

TEST_F(RulesTest, AnAllocationNeedsAGroupBudget) {
  group("g");
  EXPECT_EQ(refused(create_key(state_, context(), "g", new_key(allocated("a", 1))),
                    RuleErrorKind::kAllocationWithoutBudget)
                .amount_micros,
            1);
}

TEST_F(RulesTest, AllocationsBeyondInt64AreRefusedNotWrapped) {
  group("g", budgeted(kMax));
  key("g", allocated("a", kMax));
  const RuleError e = refused(create_key(state_, context(), "g", new_key(allocated("b", kMax))),
                              RuleErrorKind::kAllocationOverflow);
  EXPECT_EQ(e.group, "g");
  EXPECT_EQ(allocated_micros(state_, "g"), kMax);
}

TEST_F(RulesTest, LoweringAnAllocationOrABudgetIsCheckedAgainstThePeriodsSpend) {
  group("g", budgeted(1000));
  const std::string a = key("g", allocated("a", 500));
  KeyFields lower;
  lower.allocation_micros = 299;
  const Change lowered = ok(update_key(state_, context(), a, lower));
  ASSERT_EQ(lowered.spend_caps.size(), 1u);
  const SpendCap& cap = lowered.spend_caps[0];
  EXPECT_EQ(cap.group, "g");
  EXPECT_EQ(cap.key_id, a);
  EXPECT_EQ(cap.cap_micros, 299);
  EXPECT_EQ(cap.budget.amount_micros, 1000) << "the allocation counts in its group's period";
  EXPECT_TRUE(check_spend(cap, 299));
  ASSERT_FALSE(check_spend(cap, 300));
  EXPECT_EQ(check_spend(cap, 300).error().kind, RuleErrorKind::kBelowSpent);
  EXPECT_EQ(check_spend(cap, 300).error().amount_micros, 300);

  KeyFields raise;
  raise.allocation_micros = 400;
  EXPECT_TRUE(update(a, raise).spend_caps.empty()) << "raising cannot go below the spend";
  const Change budget = ok(update_group(state_, context(), "g", budgeted(600)));
  ASSERT_EQ(budget.spend_caps.size(), 1u);
  EXPECT_EQ(budget.spend_caps[0].key_id, "") << "the whole group";
  EXPECT_EQ(budget.spend_caps[0].cap_micros, 600);
  BudgetFields paris;
  paris.time_zone = "Europe/Paris";
  GroupFields zone;
  zone.budget = paris;
  EXPECT_EQ(ok(update_group(state_, context(), "g", zone)).spend_caps.size(), 1u)
      << "a period that starts elsewhere";
}

TEST_F(RulesTest, AKeysAliasesStayWithinItsGroups) {
  GroupFields scoped;
  scoped.allowed_aliases = std::vector<std::string>{"chat", "embed"};
  group("g", scoped);
  KeyFields wide = named("a");
  wide.allowed_aliases = std::vector<std::string>{"chat", "image"};
  const RuleError out =
      refused(create_key(state_, context(), "g", new_key(wide)), RuleErrorKind::kAliasOutOfScope);
  EXPECT_EQ(out.aliases, std::vector<std::string>{"image"});
  KeyFields embed = named("a");
  embed.allowed_aliases = std::vector<std::string>{"embed"};
  const std::string a = key("g", embed);
  KeyFields image;
  image.allowed_aliases = std::vector<std::string>{"image"};
  refused(update_key(state_, context(), a, image), RuleErrorKind::kAliasOutOfScope);
  GroupFields narrow;
  narrow.allowed_aliases = std::vector<std::string>{"chat"};
  const RuleError left =
      refused(update_group(state_, context(), "g", narrow), RuleErrorKind::kScopeLeavesOutKey);
  EXPECT_EQ(left.key, "a");
  EXPECT_EQ(left.aliases, std::vector<std::string>{"embed"});
  GroupFields wider;
  wider.allowed_aliases = std::vector<std::string>{"embed", "image"};
  ok(update_group(state_, context(), "g", wider));
  group("open");
  KeyFields anything = named("b");
  anything.allowed_aliases = std::vector<std::string>{"anything"};
  key("open", anything);
}

TEST_F(RulesTest, DisablingKeepsTheAllocationRevokingReleasesItAndIsFinal) {
  group("g", budgeted(100));
  const std::string a = key("g", allocated("a", 100));
  KeyFields status;
  status.status = store::KeyStatus::kDisabled;
  EXPECT_EQ(std::get<KeyEdit>(update(a, status).edits[0]).action, "key.disable");
  EXPECT_EQ(stored(a).allocation_micros, 100);
  refused(create_key(state_, context(), "g", new_key(allocated("b", 1))),
          RuleErrorKind::kAllocationExceedsBudget);
  status.status = store::KeyStatus::kActive;
  EXPECT_EQ(std::get<KeyEdit>(update(a, status).edits[0]).action, "key.enable");
  status.status = store::KeyStatus::kRevoked;
  const Change revoked = update(a, status);
  const KeyEdit& edit = std::get<KeyEdit>(revoked.edits[0]);
  EXPECT_EQ(edit.action, "key.revoke");
  EXPECT_EQ(edit.before->allocation_micros, 100) << "the audit keeps the old value";
  EXPECT_FALSE(stored(a).allocation_micros);
  key("g", allocated("b", 100));
  status.status = store::KeyStatus::kActive;
  EXPECT_EQ(refused(update_key(state_, context(), a, status), RuleErrorKind::kKeyRevoked).key, "a");
  refused(rotate_key(state_, context(), a, generate_key_secret()), RuleErrorKind::kKeyRevoked);
}

TEST_F(RulesTest, AGroupIsDeletedOnlyWhenItsKeysAreRevoked) {
  group("g");
  const std::string a = key("g", named("a"));
  EXPECT_EQ(refused(delete_group(state_, context(), "g"), RuleErrorKind::kGroupHasKeys).key, "a");
  KeyFields revoke;
  revoke.status = store::KeyStatus::kRevoked;
  update(a, revoke);
  const Change deleted = ok(delete_group(state_, context(), "g"));
  const GroupEdit& edit = std::get<GroupEdit>(deleted.edits[0]);
  EXPECT_EQ(edit.action, "group.delete");
  EXPECT_FALSE(edit.after);
  EXPECT_EQ(find_group(state_, "g"), nullptr);
  refused(delete_group(state_, context(), "g"), RuleErrorKind::kGroupNotFound);
}

TEST_F(RulesTest, AGroupWithItsKeysIsOneChangeOrNone) {
  const std::vector<NewKey> over = {new_key(allocated("a", 60)), new_key(allocated("b", 60))};
  EXPECT_EQ(refused(create_group(state_, context(), "g", budgeted(100), over),
                    RuleErrorKind::kAllocationExceedsBudget)
                .item,
            1)
      << "names the key it is about";
  const std::vector<NewKey> fits = {new_key(allocated("a", 60)), new_key(named("b"))};
  const Change created = ok(create_group(state_, context(), "g", budgeted(100), fits));
  ASSERT_EQ(created.edits.size(), 3u);
  EXPECT_EQ(std::get<GroupEdit>(created.edits[0]).action, "group.create");
  EXPECT_EQ(std::get<KeyEdit>(created.edits[1]).after.id, fits[0].id);
  EXPECT_EQ(std::get<KeyEdit>(created.edits[2]).after.id, fits[1].id);
  EXPECT_EQ(allocated_micros(state_, "g"), 60);
}

TEST_F(RulesTest, AChangeToTheSameValuesTouchesNothing) {
  group("g", budgeted(100));
  const std::string a = key("g", allocated("a", 10));
  now_ += 1000;
  EXPECT_TRUE(ok(update_group(state_, context(), "g", budgeted(100))).edits.empty());
  EXPECT_TRUE(update(a, allocated("a", 10)).edits.empty());
  EXPECT_EQ(stored(a).updated_at_ms, kNow);
  KeyFields rpm;
  rpm.rpm = 5;
  update(a, rpm);
  EXPECT_EQ(stored(a).updated_at_ms, kNow + 1000);
}

TEST_F(RulesTest, RotatingGivesANewSecretAndKeepsEverythingElse) {
  group("g", budgeted(100));
  KeyFields k = allocated("a", 70);
  k.rpm = 3;
  const std::string a = key("g", k);
  const store::ApiKey before = stored(a);
  const std::string secret = generate_key_secret();
  const Change rotated = ok(rotate_key(state_, context(), a, secret));
  EXPECT_EQ(std::get<KeyEdit>(rotated.edits[0]).action, "key.rotate");
  const store::ApiKey& after = stored(a);
  EXPECT_EQ(after.sha256_hex, config::sha256_hex(secret));
  EXPECT_NE(after.sha256_hex, before.sha256_hex);
  EXPECT_EQ(after.prefix, key_prefix(secret));
  EXPECT_EQ(after.allocation_micros, 70);
  EXPECT_EQ(after.quota.rpm, 3u);
  refused(rotate_key(state_, context(), "key_nope", secret), RuleErrorKind::kKeyNotFound);
}

TEST_F(RulesTest, BadValuesThatNeedTheStateAreRefused) {
  group("g");
  KeyFields past = named("a");
  past.expires_at_ms = kNow;
  refused(create_key(state_, context(), "g", new_key(past)), RuleErrorKind::kExpiryInPast);
  BudgetFields advisory;
  advisory.mode = store::BudgetMode::kAdvisory;
  GroupFields no_amount;
  no_amount.budget = advisory;
  refused(update_group(state_, context(), "g", no_amount), RuleErrorKind::kBudgetAmountRequired);
  store::ApiKey orphan;  // a store edited by hand
  orphan.id = "key_orphan";
  orphan.name = "orphan";
  orphan.group = "gone";
  state_.keys.push_back(orphan);
  refused(update_key(state_, context(), "key_orphan", named("o2")),
          RuleErrorKind::kKeyWithoutGroup);
}

TEST(KeySecret, IsTheSchemeAndFortyBase62CharactersFromTheCsprng) {
  std::set<std::string> seen;
  for (int i = 0; i < 50; ++i) {
    const std::string s = generate_key_secret();
    ASSERT_EQ(s.size(), 7u + 40u);
    EXPECT_EQ(s.substr(0, 7), "sk-slc-");
    for (char c : s.substr(7)) {
      EXPECT_TRUE(std::isalnum(static_cast<unsigned char>(c))) << s;
    }
    seen.insert(s);
  }
  EXPECT_EQ(seen.size(), 50u);
  EXPECT_EQ(key_prefix("sk-slc-3f9aXYZ"), "sk-slc-3f9a");
  const std::string id = generate_key_id();
  EXPECT_EQ(id.size(), 4u + 16u);
  EXPECT_EQ(id.substr(0, 4), "key_");
}

}  // namespace
}  // namespace sluice::tenancy
