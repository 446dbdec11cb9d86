// The admin rules of key groups and API keys, against a real SQLite store (a temp file).

#include "tenancy/admin_service.h"

#include <filesystem>
#include <limits>
#include <set>

#include <boost/json.hpp>
#include <gtest/gtest.h>
#include <unistd.h>

#include "config/scalars.h"
#include "store/sqlite_store.h"
#include "store/tenancy_sql.h"

namespace sluice::tenancy {
namespace {

namespace json = boost::json;

// 2026-11-30T00:00:00Z; the monthly period (UTC) starts 2026-11-01.
constexpr std::int64_t kNow = 1'795'996'800'000;
constexpr std::int64_t kNov1 = 1'793'491'200'000;

json::value parse(std::string_view text) { return json::parse(text); }

// Runs the store's calls through, except that the first commit finds someone else's change
// committed just before it (a conflict the service must re-read and re-check).
class RacingStore : public store::Store {
 public:
  explicit RacingStore(store::Store& inner) : inner_(inner) {}
  bool race = false;
  int commits = 0;

  std::string_view kind() const override { return inner_.kind(); }
  Result<void> migrate() override { return inner_.migrate(); }
  Result<void> ping() override { return inner_.ping(); }
  Result<void> insert_usage(std::span<const store::UsageRecord> r) override {
    return inner_.insert_usage(r);
  }
  Result<std::vector<store::UsageRow>> query_usage(const store::UsageQuery& q) override {
    return inner_.query_usage(q);
  }
  Result<std::optional<store::UsageRecord>> find_usage(std::string_view id) override {
    return inner_.find_usage(id);
  }
  Result<std::uint64_t> count_usage() override { return inner_.count_usage(); }
  Result<void> export_usage(std::int64_t from, std::int64_t to,
                            const std::function<bool(const store::UsageRecord&)>& each) override {
    return inner_.export_usage(from, to, each);
  }
  Result<store::TenancyState> load_tenancy() override { return inner_.load_tenancy(); }
  Result<std::uint64_t> tenancy_revision() override { return inner_.tenancy_revision(); }
  Result<std::uint64_t> commit_tenancy(const store::TenancyCommit& c) override {
    ++commits;
    if (race) {
      race = false;
      store::TenancyCommit other;
      other.expected_revision = c.expected_revision;
      store::KeyGroup intruder;
      intruder.name = "intruder";
      other.put_groups = {intruder};
      EXPECT_TRUE(inner_.commit_tenancy(other));
    }
    return inner_.commit_tenancy(c);
  }
  Result<std::optional<store::IdempotentReply>> find_idempotent(std::string_view key,
                                                                std::int64_t now_ms) override {
    return inner_.find_idempotent(key, now_ms);
  }
  Result<void> purge_idempotent(std::int64_t now_ms) override {
    return inner_.purge_idempotent(now_ms);
  }
  Result<std::vector<store::AuditEntry>> list_audit(const store::AuditQuery& q) override {
    return inner_.list_audit(q);
  }

 private:
  store::Store& inner_;
};

class AdminServiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = std::filesystem::temp_directory_path() /
            ("sluice-admin-service-" + std::to_string(::getpid()) + "-" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".db");
    std::filesystem::remove(path_);
    auto opened = store::SqliteStore::open(path_.string());
    ASSERT_TRUE(opened) << opened.error().message();
    sqlite_ = std::move(*opened);
    ASSERT_TRUE(sqlite_->migrate());
    racing_ = std::make_unique<RacingStore>(*sqlite_);
    service_ = std::make_unique<AdminService>(
        *racing_, AdminService::Options{[](std::string_view name) { return name == "from-config"; },
                                        [this] { return now_; }});
    caller_.request_id = "req-1";
  }
  void TearDown() override {
    service_.reset();
    sqlite_.reset();
    for (const char* suffix : {"", "-wal", "-shm"}) {
      std::filesystem::remove(path_.string() + suffix);
    }
  }

  // The reply of a call that must succeed.
  json::object ok(const Result<AdminReply>& r, int status = 200) {
    EXPECT_TRUE(r) << r.error().message();
    if (!r) {
      return {};
    }
    EXPECT_EQ(r->status, status) << json::serialize(r->body);
    return r->body.is_object() ? r->body.as_object() : json::object{};
  }
  // The error of a call that must fail with `status` and `code`.
  void fails(const Result<AdminReply>& r, int status, std::string_view code) {
    ASSERT_FALSE(r) << json::serialize(r->body);
    EXPECT_EQ(r.error().http_status(), status) << r.error().message();
    EXPECT_EQ(r.error().code(), code) << r.error().message();
  }

  json::object group(std::string_view body) {
    return ok(service_->create_group(parse(body), caller_), 201);
  }
  json::object key(std::string_view body) {
    return ok(service_->create_key(parse(body), caller_), 201);
  }
  json::object patch_key(const json::object& k, std::string_view body) {
    return ok(service_->update_key(k.at("id").as_string(), parse(body), caller_));
  }
  store::TenancyState state() {
    auto s = sqlite_->load_tenancy();
    EXPECT_TRUE(s) << s.error().message();
    return s ? *s : store::TenancyState{};
  }
  void spend(std::string key, std::string group, std::int64_t micros, std::int64_t at) {
    store::UsageRecord r;
    r.record_id = "rec-" + std::to_string(++records_);
    r.request_id = r.record_id;
    r.started_at_ms = at;
    r.ended_at_ms = at + 1;
    r.key_name = std::move(key);
    r.key_group = std::move(group);
    r.outcome = "complete";
    r.priced = true;
    r.cost_micros = micros;
    r.cost_items = "[]";
    ASSERT_TRUE(sqlite_->insert_usage(std::vector<store::UsageRecord>{r}));
  }

  std::filesystem::path path_;
  std::unique_ptr<store::SqliteStore> sqlite_;
  std::unique_ptr<RacingStore> racing_;
  std::unique_ptr<AdminService> service_;
  AdminCaller caller_;
  std::int64_t now_ = kNow;
  int records_ = 0;
};

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
}

TEST_F(AdminServiceTest, CreatesAGroupAndAKeyWhoseSecretIsShownOnce) {
  const json::object g = group(
      R"({"name":"research","description":"R&D","budget":{"amount_micros":100000000},
          "rpm":100,"tpm":5000,"concurrency":4,"allowed_aliases":["chat","embed"]})");
  EXPECT_EQ(g.at("name"), "research");
  EXPECT_EQ(g.at("budget").at("period"), "monthly");
  EXPECT_EQ(g.at("budget").at("mode"), "hard");
  EXPECT_EQ(g.at("budget").at("time_zone"), "UTC");

  const json::object k = key(R"({"name":"indexer","group":"research","allocation_micros":40000000,
                                 "allowed_aliases":["chat"],"rpm":10,
                                 "expires_at":"2027-01-01T00:00:00Z"})");
  const std::string secret(k.at("secret").as_string());
  EXPECT_EQ(secret.substr(0, 7), "sk-slc-");
  EXPECT_EQ(k.at("prefix").as_string(), key_prefix(secret));
  EXPECT_EQ(k.at("status"), "active");
  EXPECT_EQ(k.at("expires_at"), "2027-01-01T00:00:00Z");

  const store::TenancyState s = state();
  ASSERT_EQ(s.keys.size(), 1u);
  EXPECT_EQ(s.keys[0].sha256_hex, config::sha256_hex(secret)) << "only the hash is stored";
  EXPECT_EQ(s.keys[0].allocation_micros, 40'000'000);
  EXPECT_EQ(s.keys[0].quota.rpm, 10u);
  EXPECT_EQ(s.keys[0].allowed_aliases, std::vector<std::string>{"chat"});
  EXPECT_EQ(s.groups[0].quota.concurrency, 4u);

  const std::string listed = json::serialize(ok(service_->list_keys(std::nullopt)));
  EXPECT_EQ(listed.find(secret), std::string::npos);
  EXPECT_EQ(listed.find(s.keys[0].sha256_hex), std::string::npos);
  EXPECT_EQ(ok(service_->get_key(s.keys[0].id)).count("secret"), 0u);
  EXPECT_EQ(ok(service_->get_group("research")).at("allocated_micros"), 40'000'000);
}

TEST_F(AdminServiceTest, MalformedInputIsA400NamingTheField) {
  fails(service_->create_group(parse(R"({"name":"bad name"})"), caller_), 400, "invalid_request");
  fails(service_->create_group(parse(R"({"name":"g","rpm":"many"})"), caller_), 400,
        "invalid_request");
  fails(service_->create_group(parse(R"({"name":"g","colour":"red"})"), caller_), 400,
        "invalid_request");
  fails(service_->create_group(parse(R"({"name":"g","budget":{"amount_micros":0}})"), caller_), 400,
        "invalid_request");
  fails(service_->create_group(parse(R"({"name":"g","budget":{"amount_micros":5,
                                          "time_zone":"Mars/Olympus"}})"),
                               caller_),
        400, "invalid_request");
  fails(service_->create_group(parse("[1]"), caller_), 400, "invalid_request");
  group(R"({"name":"g"})");
  fails(service_->create_key(parse(R"({"name":"k","group":"g","expires_at":"tomorrow"})"), caller_),
        400, "invalid_request");
  fails(service_->create_key(
            parse(R"({"name":"k","group":"g","expires_at":"2020-01-01T00:00:00Z"})"), caller_),
        400, "invalid_request");
  EXPECT_TRUE(state().keys.empty());
}

TEST_F(AdminServiceTest, NamesAreUniqueAndNeverAConfigKeys) {
  group(R"({"name":"g"})");
  fails(service_->create_group(parse(R"({"name":"g"})"), caller_), 409, "group_exists");
  const json::object k = key(R"({"name":"a","group":"g"})");
  fails(service_->create_key(parse(R"({"name":"a","group":"g"})"), caller_), 409, "name_taken");
  fails(service_->create_key(parse(R"({"name":"from-config","group":"g"})"), caller_), 409,
        "name_taken");
  fails(service_->update_key(k.at("id").as_string(), parse(R"({"name":"from-config"})"), caller_),
        409, "name_taken");
  fails(service_->create_key(parse(R"({"name":"b","group":"nope"})"), caller_), 422,
        "unknown_group");
  fails(service_->get_key("key_missing"), 404, "not_found");
  fails(service_->update_group("nope", parse("{}"), caller_), 404, "not_found");
}

TEST_F(AdminServiceTest, AllocationsNeverSumAboveTheGroupBudget) {
  group(R"({"name":"g","budget":{"amount_micros":100}})");
  const json::object a = key(R"({"name":"a","group":"g","allocation_micros":60})");
  fails(service_->create_key(parse(R"({"name":"b","group":"g","allocation_micros":50})"), caller_),
        409, "allocation_exceeds_budget");
  EXPECT_EQ(state().keys.size(), 1u) << "nothing of the refused key is stored";
  key(R"({"name":"b","group":"g","allocation_micros":40})");
  fails(service_->update_key(a.at("id").as_string(), parse(R"({"allocation_micros":61})"), caller_),
        409, "allocation_exceeds_budget");
  fails(service_->update_group("g", parse(R"({"budget":{"amount_micros":99}})"), caller_), 409,
        "allocation_exceeds_budget");
  fails(service_->update_group("g", parse(R"({"budget":null})"), caller_), 422,
        "allocation_without_budget");
  ok(service_->update_group("g", parse(R"({"budget":{"amount_micros":150}})"), caller_));
  patch_key(a, R"({"allocation_micros":110})");
}

TEST_F(AdminServiceTest, AllocationsThatWouldSumBeyondInt64AreRefused) {
  group(R"({"name":"g","budget":{"amount_micros":9223372036854775807}})");
  key(R"({"name":"a","group":"g","allocation_micros":9223372036854775807})");
  fails(service_->create_key(
            parse(R"({"name":"b","group":"g","allocation_micros":9223372036854775807})"), caller_),
        422, "amount_out_of_range");
  const json::object b = key(R"({"name":"b","group":"g"})");
  fails(service_->update_key(b.at("id").as_string(), parse(R"({"allocation_micros":1})"), caller_),
        422, "amount_out_of_range");
  EXPECT_EQ(ok(service_->get_group("g")).at("allocated_micros"),
            std::numeric_limits<std::int64_t>::max());
}

TEST_F(AdminServiceTest, AnAllocationNeedsAGroupBudget) {
  group(R"({"name":"g"})");
  fails(service_->create_key(parse(R"({"name":"a","group":"g","allocation_micros":1})"), caller_),
        422, "allocation_without_budget");
}

TEST_F(AdminServiceTest, NoAdjustmentGoesBelowWhatThePeriodHasSpent) {
  group(R"({"name":"g","budget":{"amount_micros":1000}})");
  const json::object a = key(R"({"name":"a","group":"g","allocation_micros":500})");
  spend("a", "g", 300, kNow - 1000);
  spend("a", "g", 5000, kNov1 - 1);  // last month: not this period's spend
  spend("other", "g", 200, kNow - 1000);
  fails(
      service_->update_key(a.at("id").as_string(), parse(R"({"allocation_micros":299})"), caller_),
      409, "below_consumed");
  patch_key(a, R"({"allocation_micros":300})");
  fails(service_->update_group("g", parse(R"({"budget":{"amount_micros":499}})"), caller_), 409,
        "below_consumed");
  ok(service_->update_group("g", parse(R"({"budget":{"amount_micros":500}})"), caller_));
}

TEST_F(AdminServiceTest, AKeysAliasesStayWithinItsGroups) {
  group(R"({"name":"g","allowed_aliases":["chat","embed"]})");
  fails(service_->create_key(
            parse(R"({"name":"a","group":"g","allowed_aliases":["chat","image"]})"), caller_),
        422, "alias_out_of_scope");
  const json::object a = key(R"({"name":"a","group":"g","allowed_aliases":["embed"]})");
  fails(service_->update_key(a.at("id").as_string(), parse(R"({"allowed_aliases":["image"]})"),
                             caller_),
        422, "alias_out_of_scope");
  fails(service_->update_group("g", parse(R"({"allowed_aliases":["chat"]})"), caller_), 422,
        "alias_out_of_scope");
  ok(service_->update_group("g", parse(R"({"allowed_aliases":["embed","image"]})"), caller_));
  group(R"({"name":"open"})");
  key(R"({"name":"b","group":"open","allowed_aliases":["anything"]})");
}

TEST_F(AdminServiceTest, DisablingKeepsTheAllocationAndRevokingReleasesIt) {
  group(R"({"name":"g","budget":{"amount_micros":100}})");
  const json::object a = key(R"({"name":"a","group":"g","allocation_micros":100})");
  EXPECT_EQ(patch_key(a, R"({"status":"disabled"})").at("allocation_micros"), 100);
  fails(service_->create_key(parse(R"({"name":"b","group":"g","allocation_micros":1})"), caller_),
        409, "allocation_exceeds_budget");
  EXPECT_EQ(patch_key(a, R"({"status":"active"})").at("allocation_micros"), 100);
  const json::object revoked = ok(service_->revoke_key(a.at("id").as_string(), caller_));
  EXPECT_EQ(revoked.at("status"), "revoked");
  EXPECT_TRUE(revoked.at("allocation_micros").is_null());
  key(R"({"name":"b","group":"g","allocation_micros":100})");
  fails(service_->update_key(a.at("id").as_string(), parse(R"({"status":"active"})"), caller_), 409,
        "key_revoked");
  fails(service_->revoke_key(a.at("id").as_string(), caller_), 409, "key_revoked");
}

TEST_F(AdminServiceTest, AGroupIsDeletedOnlyWhenItsKeysAreRevoked) {
  group(R"({"name":"g"})");
  const json::object a = key(R"({"name":"a","group":"g"})");
  fails(service_->delete_group("g", caller_), 409, "group_has_keys");
  ok(service_->revoke_key(a.at("id").as_string(), caller_));
  ok(service_->delete_group("g", caller_));
  EXPECT_TRUE(state().groups.empty());
  fails(service_->delete_group("g", caller_), 404, "not_found");
}

TEST_F(AdminServiceTest, EveryChangeIsAuditedWithoutTheSecret) {
  caller_.actor = "alice";
  group(R"({"name":"g"})");
  const json::object a = key(R"({"name":"a","group":"g"})");
  patch_key(a, R"({"status":"disabled"})");
  patch_key(a, R"({"status":"active","rpm":5})");
  ok(service_->revoke_key(a.at("id").as_string(), caller_));
  auto entries = sqlite_->list_audit({});
  ASSERT_TRUE(entries);
  std::vector<std::string> actions;
  for (const store::AuditEntry& e : *entries) {
    actions.push_back(e.action);
    EXPECT_EQ(e.actor, "alice");
    EXPECT_EQ(e.request_id, "req-1");
    EXPECT_EQ(e.after_json.find(std::string(a.at("secret").as_string())), std::string::npos);
    EXPECT_EQ(e.after_json.find(state().keys[0].sha256_hex), std::string::npos);
  }
  EXPECT_EQ(actions, (std::vector<std::string>{"key.revoke", "key.enable", "key.disable",
                                               "key.create", "group.create"}));
  EXPECT_NE((*entries)[1].before_json.find("\"disabled\""), std::string::npos);
  EXPECT_NE((*entries)[1].after_json.find("\"rpm\":5"), std::string::npos);
  // An update that changes nothing commits nothing and audits nothing.
  ok(service_->update_group("g", parse("{}"), caller_));
  EXPECT_EQ(sqlite_->list_audit({})->size(), 5u);
  EXPECT_EQ(ok(service_->list_audit({})).at("entries").as_array().size(), 5u);
}

TEST_F(AdminServiceTest, AGroupWithItsKeysIsCreatedInOneCommitOrNotAtAll) {
  fails(service_->create_group(parse(R"({"name":"g","budget":{"amount_micros":100},"keys":[
                                          {"name":"a","allocation_micros":60},
                                          {"name":"b","allocation_micros":60}]})"),
                               caller_),
        409, "allocation_exceeds_budget");
  EXPECT_TRUE(state().groups.empty());
  EXPECT_TRUE(state().keys.empty());
  const json::object g = group(R"({"name":"g","budget":{"amount_micros":100},"keys":[
                                     {"name":"a","allocation_micros":60},{"name":"b"}]})");
  ASSERT_EQ(g.at("keys").as_array().size(), 2u);
  EXPECT_TRUE(g.at("keys").as_array()[0].as_object().at("secret").is_string());
  EXPECT_EQ(g.at("allocated_micros"), 60);
  EXPECT_EQ(state().revision, 1u) << "one commit";
  EXPECT_EQ(state().keys.size(), 2u);
}

TEST_F(AdminServiceTest, AnIdempotencyKeyDoesTheChangeOnce) {
  group(R"({"name":"g"})");
  caller_.idempotency_key = "create-a";
  caller_.request_sha256 = std::string(64, '1');
  const json::object first = key(R"({"name":"a","group":"g"})");
  EXPECT_TRUE(first.at("secret").is_string());
  const json::object again = key(R"({"name":"a","group":"g"})");
  EXPECT_EQ(again.at("id"), first.at("id"));
  EXPECT_TRUE(again.at("secret").is_null()) << "the stored answer never holds the secret";
  EXPECT_TRUE(again.contains("secret_note"));
  EXPECT_EQ(state().keys.size(), 1u);
  caller_.request_sha256 = std::string(64, '2');
  fails(service_->create_key(parse(R"({"name":"b","group":"g"})"), caller_), 422,
        "idempotency_key_reused");
  EXPECT_EQ(state().keys.size(), 1u);
}

// A group created with its keys under an Idempotency-Key: the stored answer (read from the
// table) and its replay hold no secret of any key, only the note that it was shown once.
TEST_F(AdminServiceTest, NoSecretIsStoredOrReplayedAtAnyDepth) {
  caller_.idempotency_key = "onboard";
  caller_.request_sha256 = std::string(64, '3');
  constexpr std::string_view kBody = R"({"name":"g","keys":[{"name":"a"},{"name":"b"}]})";
  const json::object first = group(kBody);
  std::vector<std::string> secrets;
  for (const json::value& k : first.at("keys").as_array()) {
    secrets.emplace_back(k.at("secret").as_string());
  }
  ASSERT_EQ(secrets.size(), 2u);
  auto stored = sqlite_->find_idempotent("onboard", now_);
  ASSERT_TRUE(stored && stored->has_value());
  const json::object replay = group(kBody);
  ASSERT_EQ(replay.at("keys").as_array().size(), 2u);
  for (std::size_t i = 0; i < secrets.size(); ++i) {
    EXPECT_EQ((*stored)->body.find(secrets[i]), std::string::npos) << "stored in plaintext";
    EXPECT_EQ(json::serialize(replay).find(secrets[i]), std::string::npos) << "replayed";
    const json::object& k = replay.at("keys").as_array()[i].as_object();
    EXPECT_EQ(k.at("id"), first.at("keys").as_array()[i].at("id"));
    EXPECT_TRUE(k.at("secret").is_null());
    EXPECT_TRUE(k.contains("secret_note"));
  }
}

TEST_F(AdminServiceTest, AnIdempotentAnswerExpiresAfterItsRetention) {
  group(R"({"name":"g"})");
  caller_.idempotency_key = "create-a";
  caller_.request_sha256 = std::string(64, '1');
  const json::object first = key(R"({"name":"a","group":"g"})");
  now_ += store::kIdempotencyRetentionMs;
  EXPECT_EQ(key(R"({"name":"a","group":"g"})").at("id"), first.at("id")) << "still replayed";
  now_ += 1;
  fails(service_->create_key(parse(R"({"name":"a","group":"g"})"), caller_), 409, "name_taken");
}

TEST_F(AdminServiceTest, RotatingGivesANewSecretAndKeepsEverythingElse) {
  group(R"({"name":"g","budget":{"amount_micros":100}})");
  const json::object a = key(R"({"name":"a","group":"g","allocation_micros":70,"rpm":3})");
  const std::string old_hash = state().keys[0].sha256_hex;
  const json::object rotated = ok(service_->rotate_key(a.at("id").as_string(), caller_));
  const std::string secret(rotated.at("secret").as_string());
  EXPECT_NE(secret, a.at("secret").as_string());
  EXPECT_EQ(rotated.at("prefix").as_string(), key_prefix(secret));
  const store::ApiKey stored = state().keys[0];
  EXPECT_EQ(stored.sha256_hex, config::sha256_hex(secret));
  EXPECT_NE(stored.sha256_hex, old_hash);
  EXPECT_EQ(stored.id, a.at("id").as_string());
  EXPECT_EQ(stored.allocation_micros, 70);
  EXPECT_EQ(stored.quota.rpm, 3u);
  auto entries = sqlite_->list_audit({});
  ASSERT_TRUE(entries);
  EXPECT_EQ(entries->front().action, "key.rotate");
  EXPECT_EQ(entries->front().after_json.find(secret), std::string::npos);
  ok(service_->revoke_key(a.at("id").as_string(), caller_));
  fails(service_->rotate_key(a.at("id").as_string(), caller_), 409, "key_revoked");
  fails(service_->rotate_key("key_nope", caller_), 404, "not_found");
}

TEST_F(AdminServiceTest, AConflictingCommitIsReReadAndReChecked) {
  group(R"({"name":"g"})");
  racing_->race = true;
  const int before = racing_->commits;
  key(R"({"name":"a","group":"g"})");
  EXPECT_EQ(racing_->commits - before, 2) << "refused once, then committed on the new state";
  const store::TenancyState s = state();
  EXPECT_EQ(s.groups.size(), 2u) << "the other change stays";
  EXPECT_EQ(s.keys.size(), 1u);
  EXPECT_EQ(s.revision, 3u);
}

}  // namespace
}  // namespace sluice::tenancy
