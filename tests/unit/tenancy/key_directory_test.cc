#include "tenancy/key_directory.h"

#include <filesystem>
#include <mutex>
#include <thread>

#include <boost/json/parse.hpp>
#include <gtest/gtest.h>
#include <unistd.h>

#include "store/sqlite_store.h"
#include "store/tenancy_sql.h"

namespace sluice::tenancy {
namespace {

std::int64_t utc_ms(int y, unsigned mo, unsigned d, int h = 0, int mi = 0) {
  return (days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60) * 1000;
}

std::string hash_of(char c) { return std::string(64, c); }

// A directory over a SqliteStore in a temporary file, driven tick by tick on a simulated clock.
class KeyDirectoryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = (std::filesystem::temp_directory_path() /
             ("sluice-keydir-" + std::to_string(::getpid()) + "-" +
              ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".db"))
                .string();
    std::filesystem::remove(path_);
    admin_ = open();
    ASSERT_TRUE(admin_->migrate());
  }
  void TearDown() override {
    directory_.reset();
    admin_.reset();
    for (const char* suffix : {"", "-wal", "-shm"}) {
      std::filesystem::remove(path_ + suffix);
    }
  }

  std::unique_ptr<store::Store> open() {
    config::StoreSettings s;
    s.kind = config::StoreSettings::Kind::kSqlite;
    s.sqlite_path = path_;
    auto opened = store::open_store(s);
    EXPECT_TRUE(opened) << opened.error().message();
    return std::move(*opened);
  }

  void make_directory(std::vector<config::Key> config_keys = {}) {
    KeyDirectoryOptions o;
    o.config_keys = std::move(config_keys);
    o.settings.enabled = true;
    o.settings.spend_refresh = std::chrono::seconds(5);
    o.settings.webhook_url = "http://receiver.invalid/hook";
    o.open_store = [this]() -> Result<std::unique_ptr<store::Store>> {
      if (store_down_) {
        return Error(ErrorKind::kUnavailable, "store is down (test)");
      }
      return open();
    };
    o.clock = &clock_;
    o.instance = "test";
    o.post = [this](const std::string& url, const std::string& body,
                    std::chrono::milliseconds) -> Result<int> {
      std::lock_guard lock(mu_);
      EXPECT_EQ(url, "http://receiver.invalid/hook");
      posted_.push_back(body);
      return 204;
    };
    directory_ = std::make_unique<KeyDirectory>(std::move(o));
  }

  std::uint64_t commit(const std::vector<store::KeyGroup>& groups,
                       const std::vector<store::ApiKey>& keys) {
    auto revision = admin_->tenancy_revision();
    EXPECT_TRUE(revision);
    store::TenancyCommit c;
    c.expected_revision = *revision;
    c.put_groups = groups;
    c.put_keys = keys;
    auto done = admin_->commit_tenancy(c);
    EXPECT_TRUE(done) << done.error().message();
    return *done;
  }

  // A usage record of the key `key_id`, named `key` when it was made.
  void spend(const std::string& key_id, const std::string& key, const std::string& group,
             std::int64_t micros) {
    store::UsageRecord r;
    r.record_id = "r" + std::to_string(++records_);
    r.request_id = r.record_id;
    r.started_at_ms = now_ms();
    r.ended_at_ms = r.started_at_ms;
    r.key_id = key_id;
    r.key_name = key;
    r.key_group = group;
    r.outcome = "complete";
    r.priced = true;
    r.cost_micros = micros;
    ASSERT_TRUE(admin_->insert_usage(std::span(&r, 1)));
  }

  std::int64_t now_ms() const {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               clock_.wall_now().time_since_epoch())
        .count();
  }

  KeySet::Found find(char hash) const {
    auto set = directory_->keys().current();
    return set ? set->find(hash_of(hash), now_ms()) : KeySet::Found{};
  }

  std::string path_;
  std::unique_ptr<store::Store> admin_;
  std::unique_ptr<KeyDirectory> directory_;
  SimulatedClock clock_{
      Clock::Wall::time_point(std::chrono::milliseconds(utc_ms(2027, 1, 31, 22)))};
  bool store_down_ = false;
  int records_ = 0;
  std::mutex mu_;
  std::vector<std::string> posted_;
};

store::KeyGroup group(std::string name, std::optional<store::Budget> budget = std::nullopt) {
  store::KeyGroup g;
  g.name = std::move(name);
  g.budget = std::move(budget);
  return g;
}

store::Budget budget(std::int64_t amount, store::BudgetMode mode) {
  store::Budget b;
  b.amount_micros = amount;
  b.mode = mode;
  b.time_zone = "UTC";
  return b;
}

store::ApiKey api_key(std::string id, std::string name, std::string group, char hash) {
  store::ApiKey k;
  k.id = std::move(id);
  k.name = std::move(name);
  k.group = std::move(group);
  k.prefix = "sk-slc-x";
  k.sha256_hex = hash_of(hash);
  return k;
}

TEST_F(KeyDirectoryTest, RevocationIsSeenAtTheNextRefresh) {
  make_directory();
  EXPECT_EQ(directory_->refresh_ok(), -1);
  EXPECT_EQ(directory_->keys().current(), nullptr);
  directory_->tick_for_test();
  EXPECT_EQ(directory_->refresh_ok(), 1);
  ASSERT_NE(directory_->keys().current(), nullptr) << "an empty store is an empty set";
  EXPECT_EQ(directory_->keys().current()->size(), 0u);

  store::ApiKey k = api_key("key_1", "indexer", "research", 'a');
  const std::uint64_t revision = commit({group("research")}, {k});
  directory_->tick_for_test();
  EXPECT_EQ(directory_->revision(), revision);
  ASSERT_EQ(find('a').verdict, KeyVerdict::kActive);
  const std::shared_ptr<const KeySet> pinned = directory_->keys().current();

  k.status = store::KeyStatus::kRevoked;
  commit({}, {k});
  directory_->tick_for_test();
  EXPECT_EQ(find('a').verdict, KeyVerdict::kRevoked);
  // A request that pinned the older set keeps a valid key until it ends.
  EXPECT_EQ(pinned->find(hash_of('a'), now_ms()).key->key.name, "indexer");

  const std::shared_ptr<const KeySet> same = directory_->keys().current();
  directory_->tick_for_test();
  EXPECT_EQ(directory_->keys().current(), same) << "revision unchanged: nothing rebuilt";
}

TEST_F(KeyDirectoryTest, AStoreThatIsDownKeepsTheLastSet) {
  make_directory();
  commit({group("research")}, {api_key("key_1", "indexer", "research", 'a')});
  directory_->tick_for_test();
  ASSERT_EQ(find('a').verdict, KeyVerdict::kActive);
  // A new instance starting while the store is down.
  directory_.reset();
  store_down_ = true;
  make_directory();
  directory_->tick_for_test();
  EXPECT_EQ(directory_->refresh_ok(), 0);
  EXPECT_EQ(directory_->keys().current(), nullptr) << "never loaded: no keys from the store";
  store_down_ = false;
  directory_->tick_for_test();
  EXPECT_EQ(directory_->refresh_ok(), 1);
  EXPECT_EQ(find('a').verdict, KeyVerdict::kActive);
  store_down_ = true;  // the open connection is kept: only a new open would fail
  directory_->tick_for_test();
  EXPECT_EQ(find('a').verdict, KeyVerdict::kActive);
}

TEST_F(KeyDirectoryTest, TheFirstAttemptIsMarkedEvenWhenTheStoreIsDown) {
  // /readyz waits for attempted(): a store down at start must not keep an instance unready.
  store_down_ = true;  // set before the thread starts, never changed while it runs
  make_directory();
  EXPECT_FALSE(directory_->keys().attempted());
  directory_->start();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!directory_->keys().attempted() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));  // polled, bounded
  }
  EXPECT_TRUE(directory_->keys().attempted());
  EXPECT_EQ(directory_->refresh_ok(), 0) << "attempted, and it failed";
  EXPECT_EQ(directory_->keys().current(), nullptr);
  directory_->stop();
}

TEST_F(KeyDirectoryTest, BudgetSpendComesFromTheLedgerPlusLocalCharges) {
  make_directory();
  const store::Budget b = budget(1000, store::BudgetMode::kHard);
  store::ApiKey plain = api_key("key_1", "plain", "research", 'a');
  store::ApiKey allocated = api_key("key_2", "allocated", "research", 'b');
  allocated.allocation_micros = 400;
  commit({group("research", b)}, {plain, allocated});
  spend("key_1", "plain", "research", 500);  // another instance's records, already in the ledger
  spend("key_2", "allocated", "research", 100);
  directory_->tick_for_test();
  const StoreKey* p = find('a').key;
  const StoreKey* a = find('b').key;
  ASSERT_NE(p, nullptr);
  ASSERT_NE(p->budget, nullptr);
  EXPECT_EQ(p->budget->cap_micros(), 600);
  EXPECT_EQ(p->budget->spent(now_ms()), 500);
  EXPECT_EQ(a->budget->spent(now_ms()), 100);
  EXPECT_EQ(p->charge_to[1]->spent(now_ms()), 600) << "the group's whole account";
  EXPECT_FALSE(p->budget->exhausted(now_ms()));

  // This instance charges 100 to the pool: exhausted at once, before any ledger read.
  for (BudgetAccount* account : p->charge_to) {
    account->add(100);
  }
  EXPECT_TRUE(p->budget->exhausted(now_ms()));
  EXPECT_FALSE(a->budget->exhausted(now_ms())) << "the allocation is separate";

  // Its record reaches the ledger; the next read counts it once.
  spend("key_1", "plain", "research", 100);
  clock_.advance(std::chrono::seconds(5));
  directory_->tick_for_test();
  EXPECT_EQ(p->budget->spent(now_ms()), 600);
  EXPECT_EQ(p->charge_to[1]->spent(now_ms()), 700);

  // 2027-02-01T00:00Z: a new month, nothing spent in it yet.
  clock_.set_wall(Clock::Wall::time_point(std::chrono::milliseconds(utc_ms(2027, 2, 1))));
  EXPECT_FALSE(p->budget->exhausted(now_ms())) << "past its period: admits until rolled";
  directory_->tick_for_test();
  EXPECT_EQ(p->budget->spent(now_ms()), 0);
  EXPECT_EQ(p->budget->period().start_ms, utc_ms(2027, 2, 1));
}

// A rename changes nothing in the money: what the key spent before and after it counts
// against its allocation (by its id), on the instance that saw the rename and on one started
// after it, and the pool pays none of it.
TEST_F(KeyDirectoryTest, RenamingAKeyChangesNothingInItsBudget) {
  make_directory();
  const store::Budget b = budget(1000, store::BudgetMode::kHard);
  store::ApiKey plain = api_key("key_1", "plain", "research", 'a');
  store::ApiKey allocated = api_key("key_2", "allocated", "research", 'b');
  allocated.allocation_micros = 400;
  commit({group("research", b)}, {plain, allocated});
  spend("key_2", "allocated", "research", 300);
  directory_->tick_for_test();
  ASSERT_EQ(find('b').key->budget->spent(now_ms()), 300);

  allocated.name = "renamed";
  commit({}, {allocated});
  spend("key_2", "renamed", "research", 100);  // records carry the name of their time
  clock_.advance(std::chrono::seconds(5));
  directory_->tick_for_test();
  const StoreKey* renamed = find('b').key;
  ASSERT_NE(renamed, nullptr);
  EXPECT_EQ(renamed->key.name, "renamed");
  EXPECT_EQ(renamed->budget->name(), "renamed") << "refusals name the key as it is called now";
  EXPECT_EQ(renamed->budget->spent(now_ms()), 400);
  EXPECT_TRUE(renamed->budget->exhausted(now_ms()));
  EXPECT_EQ(find('a').key->budget->spent(now_ms()), 0) << "the pool paid nothing of it";

  directory_.reset();  // a restart: the accounts come from the store and the ledger alone
  make_directory();
  directory_->tick_for_test();
  const StoreKey* restarted = find('b').key;
  ASSERT_NE(restarted, nullptr);
  EXPECT_EQ(restarted->budget->spent(now_ms()), 400);
  EXPECT_TRUE(restarted->budget->exhausted(now_ms())) << "a drained allocation stays drained";
  EXPECT_EQ(find('a').key->budget->spent(now_ms()), 0);
  EXPECT_FALSE(find('a').key->budget->exhausted(now_ms())) << "the pool keeps its 600";
  EXPECT_EQ(find('a').key->charge_to[1]->spent(now_ms()), 400) << "the group's whole account";
}

config::Key config_key(std::string name) {
  config::Key k;
  k.id = "config:" + name;
  k.name = std::move(name);
  k.source = "sluice.yaml:7";
  return k;
}

// A store key named like a key of the config at start is refused; a reload that brings a store
// key's name is refused saying which; one that drops the name lets the store key work again.
TEST_F(KeyDirectoryTest, AConfigKeyAndAStoreKeyNeverShareAName) {
  commit({group("research")}, {api_key("key_1", "indexer", "research", 'a'),
                               api_key("key_2", "crawler", "research", 'b')});
  make_directory({config_key("indexer")});
  directory_->tick_for_test();
  EXPECT_EQ(find('a').verdict, KeyVerdict::kNameTaken);
  EXPECT_EQ(find('b').verdict, KeyVerdict::kActive);

  auto refused = directory_->admit_config_keys({config_key("indexer"), config_key("crawler")});
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().message(),
            "key name crawler (sluice.yaml:7) is the store key key_2's, in key group research; "
            "rename one of them");
  directory_->tick_for_test();
  EXPECT_EQ(find('b').verdict, KeyVerdict::kActive) << "a refused reload changes nothing";

  ASSERT_TRUE(directory_->admit_config_keys({config_key("other")}));
  directory_->tick_for_test();
  EXPECT_EQ(find('a').verdict, KeyVerdict::kActive) << "rebuilt without a store change";
}

TEST_F(KeyDirectoryTest, ThresholdEventsAreSentOncePerPeriod) {
  make_directory();
  const store::Budget b = budget(1000, store::BudgetMode::kAdvisory);
  commit({group("research", b)}, {api_key("key_1", "plain", "research", 'a')});
  spend("key_1", "plain", "research", 850);
  directory_->tick_for_test();
  directory_->tick_for_test();
  spend("key_1", "plain", "research", 200);
  clock_.advance(std::chrono::seconds(5));
  directory_->tick_for_test();
  directory_->tick_for_test();
  directory_->stop();  // sends what is queued

  std::lock_guard lock(mu_);
  ASSERT_EQ(posted_.size(), 2u);
  const auto first = boost::json::parse(posted_[0]).as_object();
  EXPECT_EQ(first.at("threshold_percent").as_int64(), 80);
  EXPECT_EQ(first.at("subject"), "group");
  EXPECT_EQ(first.at("group"), "research");
  EXPECT_EQ(first.at("mode"), "advisory");
  EXPECT_EQ(first.at("spent_micros").as_int64(), 850);
  const auto second = boost::json::parse(posted_[1]).as_object();
  EXPECT_EQ(second.at("threshold_percent").as_int64(), 100);
  EXPECT_EQ(second.at("spent_micros").as_int64(), 1050);
}

TEST_F(KeyDirectoryTest, ExpiredIdempotentAnswersArePurgedOffTheRequestPath) {
  make_directory();
  directory_->tick_for_test();
  store::TenancyCommit c;
  c.expected_revision = *admin_->tenancy_revision();
  c.put_groups = {group("research")};
  c.idempotency = store::IdempotentReply{"create-research", "sha", 201, "{}", now_ms()};
  ASSERT_TRUE(admin_->commit_tenancy(c));
  const std::int64_t stored_at = now_ms();

  clock_.advance(KeyDirectory::kIdempotencyPurgeInterval);
  directory_->tick_for_test();
  EXPECT_TRUE(admin_->find_idempotent("create-research", stored_at)->has_value())
      << "an answer within its retention is kept";

  clock_.advance(std::chrono::milliseconds(store::kIdempotencyRetentionMs));
  directory_->tick_for_test();
  EXPECT_FALSE(admin_->find_idempotent("create-research", stored_at)->has_value())
      << "deleted, not only hidden";
}

}  // namespace
}  // namespace sluice::tenancy
