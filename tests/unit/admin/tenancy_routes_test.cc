// The tenancy routes over a real SQLite store, called through the router without a socket:
// requests read, rules applied and answers rendered as the admin listener would, with the
// status, code and body the API documents; the Idempotency-Key, the audit log and the
// optimistic retry through the store.

#include "admin/tenancy_routes.h"

#include <filesystem>
#include <limits>
#include <map>

#include <boost/json.hpp>
#include <gtest/gtest.h>
#include <unistd.h>

#include "config/scalars.h"
#include "store/sqlite_store.h"
#include "store/tenancy_sql.h"

namespace sluice::admin {
namespace {

namespace json = boost::json;

// 2026-11-30T00:00:00Z; the monthly period (UTC) starts 2026-11-01.
constexpr std::int64_t kNow = 1'795'996'800'000;
constexpr std::int64_t kNov1 = 1'793'491'200'000;

// Runs the store's calls through, except that the first commit finds someone else's change
// committed just before it (a conflict the routes must re-read and re-check).
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
  Result<std::vector<store::SpendRow>> spend_since(std::int64_t from_ms) override {
    return inner_.spend_since(from_ms);
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

struct Reply {
  int status = 0;
  json::value body;
  std::string text;
  std::map<std::string, std::string> headers;

  const json::object& object() const { return body.as_object(); }
  std::string code() const {
    const json::value* e = body.is_object() ? body.as_object().if_contains("error") : nullptr;
    return e != nullptr ? std::string(e->at("code").as_string()) : std::string();
  }
};

class TenancyRoutesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = std::filesystem::temp_directory_path() /
            ("sluice-tenancy-routes-" + std::to_string(::getpid()) + "-" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".db");
    std::filesystem::remove(path_);
    auto opened = store::SqliteStore::open(path_.string());
    ASSERT_TRUE(opened) << opened.error().message();
    sqlite_ = std::move(*opened);
    ASSERT_TRUE(sqlite_->migrate());
    routes_ = std::make_unique<TenancyRoutes>(
        [this]() -> Result<std::unique_ptr<store::Store>> {
          auto store = std::make_unique<RacingStore>(*sqlite_);
          racing_ = store.get();
          return std::unique_ptr<store::Store>(std::move(store));
        },
        TenancyRoutes::Options{[](std::string_view name) { return name == "from-config"; },
                               [this] { return now_; }});
    routes_->add_to(router_);
  }
  void TearDown() override {
    routes_.reset();
    sqlite_.reset();
    for (const char* suffix : {"", "-wal", "-shm"}) {
      std::filesystem::remove(path_.string() + suffix);
    }
  }

  Reply call(std::string_view method, std::string_view target, std::string_view body = "") {
    const std::string_view path = target.substr(0, target.find('?'));
    const std::string_view query =
        path.size() < target.size() ? target.substr(path.size() + 1) : std::string_view();
    std::string allowed;
    auto match = router_.find(method, path, &allowed);
    EXPECT_TRUE(match) << method << " " << path;
    if (!match) {
      return {};
    }
    Request request;
    request.method = method;
    request.path = path;
    request.query = query;
    request.body = body;
    request.params = parse_query(query);
    request.path_params = match->path_params;
    request.header = [this](std::string_view name) -> std::string_view {
      if (name == "idempotency-key") {
        return idempotency_key_;
      }
      return name == "x-request-id" ? std::string_view("req-1") : std::string_view();
    };
    const Response response = match->handler(request);
    Reply reply{response.status, {}, response.body, {}};
    boost::system::error_code ec;
    reply.body = json::parse(response.body, ec);
    EXPECT_FALSE(ec) << response.body;
    for (const auto& [name, value] : response.headers) {
      reply.headers[name] = value;
    }
    return reply;
  }
  // The body of a call that must answer `status`.
  json::object ok(const Reply& r, int status = 200) {
    EXPECT_EQ(r.status, status) << r.text;
    return r.body.is_object() ? r.body.as_object() : json::object{};
  }
  void fails(const Reply& r, int status, std::string_view code) {
    EXPECT_EQ(r.status, status) << r.text;
    EXPECT_EQ(r.code(), code) << r.text;
  }
  json::object group(std::string_view body) {
    return ok(call("POST", "/admin/v1/groups", body), 201);
  }
  json::object key(std::string_view body) { return ok(call("POST", "/admin/v1/keys", body), 201); }
  json::object patch_key(const json::object& k, std::string_view body) {
    return ok(call("PATCH", "/admin/v1/keys/" + std::string(k.at("id").as_string()), body));
  }
  store::TenancyState state() {
    auto s = sqlite_->load_tenancy();
    EXPECT_TRUE(s) << s.error().message();
    return s ? *s : store::TenancyState{};
  }
  void spend(std::string key_id, std::string group, std::int64_t micros, std::int64_t at) {
    store::UsageRecord r;
    r.record_id = "rec-" + std::to_string(++records_);
    r.request_id = r.record_id;
    r.started_at_ms = at;
    r.ended_at_ms = at + 1;
    r.key_name = "name-of-" + key_id;
    r.key_id = std::move(key_id);
    r.key_group = std::move(group);
    r.outcome = "complete";
    r.priced = true;
    r.cost_micros = micros;
    r.cost_items = "[]";
    ASSERT_TRUE(sqlite_->insert_usage(std::vector<store::UsageRecord>{r}));
  }

  std::filesystem::path path_;
  std::unique_ptr<store::SqliteStore> sqlite_;
  std::unique_ptr<TenancyRoutes> routes_;
  RacingStore* racing_ = nullptr;  // owned by routes_, once opened
  Router router_;
  std::string idempotency_key_;
  std::int64_t now_ = kNow;
  int records_ = 0;
};

TEST_F(TenancyRoutesTest, CreatesAGroupAndAKeyWhoseSecretIsShownOnce) {
  const json::object g = group(
      R"({"name":"research","description":"R&D","budget":{"amount_micros":100000000},
          "rpm":100,"tpm":5000,"concurrency":4,"allowed_aliases":["chat","embed"]})");
  EXPECT_EQ(g.at("name"), "research");
  EXPECT_EQ(g.at("budget").at("period"), "monthly");
  EXPECT_EQ(g.at("budget").at("mode"), "hard");
  EXPECT_EQ(g.at("budget").at("time_zone"), "UTC");
  EXPECT_EQ(g.at("budget").at("starts_at"), "2026-11-30T00:00:00Z");

  const Reply created = call("POST", "/admin/v1/keys",
                             R"({"name":"indexer","group":"research","allocation_micros":40000000,
                                 "allowed_aliases":["chat"],"rpm":10,
                                 "expires_at":"2027-01-01T00:00:00Z"})");
  const json::object k = ok(created, 201);
  EXPECT_EQ(created.headers.at("X-Request-Id"), "req-1");
  const std::string secret(k.at("secret").as_string());
  EXPECT_EQ(secret.substr(0, 7), "sk-slc-");
  EXPECT_EQ(k.at("prefix").as_string(), secret.substr(0, 11));
  EXPECT_EQ(k.at("status"), "active");
  EXPECT_EQ(k.at("expires_at"), "2027-01-01T00:00:00Z");

  const store::TenancyState s = state();
  ASSERT_EQ(s.keys.size(), 1u);
  EXPECT_EQ(s.keys[0].sha256_hex, config::sha256_hex(secret)) << "only the hash is stored";
  EXPECT_EQ(s.keys[0].allocation_micros, 40'000'000);
  EXPECT_EQ(s.keys[0].quota.rpm, 10u);
  EXPECT_EQ(s.groups[0].quota.concurrency, 4u);

  const Reply listed = call("GET", "/admin/v1/keys");
  EXPECT_EQ(listed.text.find(secret), std::string::npos);
  EXPECT_EQ(listed.text.find(s.keys[0].sha256_hex), std::string::npos);
  EXPECT_EQ(ok(call("GET", "/admin/v1/keys/" + s.keys[0].id)).count("secret"), 0u);
  EXPECT_EQ(ok(call("GET", "/admin/v1/keys?group=other")).at("keys").as_array().size(), 0u);
  EXPECT_EQ(ok(call("GET", "/admin/v1/groups/research")).at("allocated_micros"), 40'000'000);
  EXPECT_EQ(ok(call("GET", "/admin/v1/groups")).at("groups").as_array().size(), 1u);
}

TEST_F(TenancyRoutesTest, MalformedInputIsA400NamingTheField) {
  fails(call("POST", "/admin/v1/groups", "{not json"), 400, "invalid_json");
  fails(call("POST", "/admin/v1/groups", "[1]"), 400, "invalid_request");
  fails(call("POST", "/admin/v1/groups", R"({"name":"bad name"})"), 400, "invalid_request");
  const Reply type = call("POST", "/admin/v1/groups", R"({"name":"g","rpm":"many"})");
  fails(type, 400, "invalid_request");
  EXPECT_NE(type.text.find("rpm: expected an integer"), std::string::npos) << type.text;
  const Reply unknown = call("POST", "/admin/v1/groups", R"({"name":"g","colour":"red"})");
  EXPECT_NE(unknown.text.find("colour: unknown field"), std::string::npos) << unknown.text;
  fails(call("POST", "/admin/v1/groups", R"({"name":"g","budget":{"amount_micros":0}})"), 400,
        "invalid_request");
  fails(call("POST", "/admin/v1/groups",
             R"({"name":"g","budget":{"amount_micros":5,"time_zone":"Mars/Olympus"}})"),
        400, "invalid_request");
  const Reply nested =
      call("POST", "/admin/v1/groups", R"({"name":"g","keys":[{"name":"a","x":1}]})");
  EXPECT_NE(nested.text.find("keys[0].x: unknown field"), std::string::npos) << nested.text;
  group(R"({"name":"g"})");
  fails(call("PATCH", "/admin/v1/groups/g", R"({"name":"h"})"), 400, "invalid_request");
  fails(call("POST", "/admin/v1/keys", R"({"name":"k"})"), 400, "invalid_request");
  fails(call("POST", "/admin/v1/keys", R"({"name":"k","group":"g","expires_at":"tomorrow"})"), 400,
        "invalid_request");
  const Reply past = call("POST", "/admin/v1/keys",
                          R"({"name":"k","group":"g","expires_at":"2020-01-01T00:00:00Z"})");
  fails(past, 400, "invalid_request");
  EXPECT_NE(past.text.find("expires_at: in the past"), std::string::npos) << past.text;
  const json::object k = key(R"({"name":"k","group":"g"})");
  const std::string path = "/admin/v1/keys/" + std::string(k.at("id").as_string());
  fails(call("PATCH", path, R"({"group":"other"})"), 400, "invalid_request");
  fails(call("PATCH", path, R"({"status":"paused"})"), 400, "invalid_request");
  fails(call("PATCH", "/admin/v1/groups/g", R"({"budget":{"mode":"hard"}})"), 400,
        "invalid_request");
  EXPECT_EQ(state().keys.size(), 1u);
}

TEST_F(TenancyRoutesTest, NamesAreUniqueAndNeverAConfigKeys) {
  group(R"({"name":"g"})");
  fails(call("POST", "/admin/v1/groups", R"({"name":"g"})"), 409, "group_exists");
  const json::object k = key(R"({"name":"a","group":"g"})");
  const Reply taken = call("POST", "/admin/v1/keys", R"({"name":"a","group":"g"})");
  fails(taken, 409, "name_taken");
  EXPECT_NE(taken.text.find(std::string(k.at("id").as_string())), std::string::npos)
      << "says which key holds it: " << taken.text;
  const Reply config = call("POST", "/admin/v1/keys", R"({"name":"from-config","group":"g"})");
  fails(config, 409, "name_taken");
  EXPECT_NE(config.text.find("from-config is the name of a key in the config file"),
            std::string::npos)
      << config.text;
  fails(call("PATCH", "/admin/v1/keys/" + std::string(k.at("id").as_string()),
             R"({"name":"from-config"})"),
        409, "name_taken");
  fails(call("POST", "/admin/v1/keys", R"({"name":"b","group":"nope"})"), 422, "unknown_group");
  fails(call("GET", "/admin/v1/keys/key_missing"), 404, "not_found");
  fails(call("GET", "/admin/v1/groups/nope"), 404, "not_found");
  fails(call("PATCH", "/admin/v1/groups/nope", "{}"), 404, "not_found");
}

TEST_F(TenancyRoutesTest, AllocationRulesAnswerWithTheirStatusAndCode) {
  group(R"({"name":"g","budget":{"amount_micros":100}})");
  const json::object a = key(R"({"name":"a","group":"g","allocation_micros":60})");
  const Reply over =
      call("POST", "/admin/v1/keys", R"({"name":"b","group":"g","allocation_micros":50})");
  fails(over, 409, "allocation_exceeds_budget");
  EXPECT_NE(over.text.find("would sum to 0.000110, above its budget of 0.000100"),
            std::string::npos)
      << over.text;
  EXPECT_EQ(state().keys.size(), 1u) << "nothing of the refused key is stored";
  fails(call("PATCH", "/admin/v1/groups/g", R"({"budget":null})"), 422,
        "allocation_without_budget");
  group(R"({"name":"open"})");
  fails(call("POST", "/admin/v1/keys", R"({"name":"c","group":"open","allocation_micros":1})"), 422,
        "allocation_without_budget");
  group(R"({"name":"huge","budget":{"amount_micros":9223372036854775807}})");
  key(R"({"name":"h1","group":"huge","allocation_micros":9223372036854775807})");
  const Reply wrapped =
      call("POST", "/admin/v1/keys",
           R"({"name":"h2","group":"huge","allocation_micros":9223372036854775807})");
  fails(wrapped, 422, "amount_out_of_range");
  EXPECT_EQ(ok(call("GET", "/admin/v1/groups/huge")).at("allocated_micros"),
            std::numeric_limits<std::int64_t>::max());
  patch_key(a, R"({"allocation_micros":100})");
}

TEST_F(TenancyRoutesTest, NoAdjustmentGoesBelowWhatThePeriodHasSpent) {
  group(R"({"name":"g","budget":{"amount_micros":1000}})");
  const json::object a = key(R"({"name":"a","group":"g","allocation_micros":500})");
  const std::string id(a.at("id").as_string());
  spend(id, "g", 300, kNow - 1000);
  spend(id, "g", 5000, kNov1 - 1);  // last month: not this period's spend
  spend("key_other", "g", 200, kNow - 1000);
  const std::string path = "/admin/v1/keys/" + id;
  const Reply below = call("PATCH", path, R"({"allocation_micros":299})");
  fails(below, 409, "below_consumed");
  EXPECT_NE(below.text.find("key a has spent 0.000300 in this period"), std::string::npos)
      << below.text;
  patch_key(a, R"({"allocation_micros":300})");
  fails(call("PATCH", "/admin/v1/groups/g", R"({"budget":{"amount_micros":499}})"), 409,
        "below_consumed");
  ok(call("PATCH", "/admin/v1/groups/g", R"({"budget":{"amount_micros":500}})"));
}

TEST_F(TenancyRoutesTest, AliasScopesAnswer422) {
  group(R"({"name":"g","allowed_aliases":["chat","embed"]})");
  const Reply outside = call("POST", "/admin/v1/keys",
                             R"({"name":"a","group":"g","allowed_aliases":["chat","image"]})");
  fails(outside, 422, "alias_out_of_scope");
  EXPECT_NE(outside.text.find("allowed_aliases: image not allowed to key group g"),
            std::string::npos)
      << outside.text;
  key(R"({"name":"a","group":"g","allowed_aliases":["embed"]})");
  const Reply narrow = call("PATCH", "/admin/v1/groups/g", R"({"allowed_aliases":["chat"]})");
  fails(narrow, 422, "alias_out_of_scope");
  EXPECT_NE(narrow.text.find("key a allows embed"), std::string::npos) << narrow.text;
}

TEST_F(TenancyRoutesTest, RevokingIsFinalAndAGroupGoesOnlyWithItsKeysRevoked) {
  group(R"({"name":"g","budget":{"amount_micros":100}})");
  const json::object a = key(R"({"name":"a","group":"g","allocation_micros":100})");
  const std::string id(a.at("id").as_string());
  EXPECT_EQ(patch_key(a, R"({"status":"disabled"})").at("allocation_micros"), 100);
  fails(call("DELETE", "/admin/v1/groups/g"), 409, "group_has_keys");
  const json::object revoked = ok(call("POST", "/admin/v1/keys/" + id + "/revoke"));
  EXPECT_EQ(revoked.at("status"), "revoked");
  EXPECT_TRUE(revoked.at("allocation_micros").is_null());
  fails(call("PATCH", "/admin/v1/keys/" + id, R"({"status":"active"})"), 409, "key_revoked");
  fails(call("POST", "/admin/v1/keys/" + id + "/revoke"), 409, "key_revoked");
  fails(call("POST", "/admin/v1/keys/" + id + "/rotate"), 409, "key_revoked");
  fails(call("POST", "/admin/v1/keys/key_nope/rotate"), 404, "not_found");
  EXPECT_EQ(ok(call("DELETE", "/admin/v1/groups/g")).at("deleted"), "g");
  EXPECT_TRUE(state().groups.empty());
  fails(call("DELETE", "/admin/v1/groups/g"), 404, "not_found");
}

TEST_F(TenancyRoutesTest, EveryChangeIsAuditedWithoutTheSecret) {
  group(R"({"name":"g"})");
  const json::object a = key(R"({"name":"a","group":"g"})");
  patch_key(a, R"({"status":"disabled"})");
  patch_key(a, R"({"status":"active","rpm":5})");
  const std::string id(a.at("id").as_string());
  ok(call("POST", "/admin/v1/keys/" + id + "/rotate"));
  ok(call("POST", "/admin/v1/keys/" + id + "/revoke"));
  auto entries = sqlite_->list_audit({});
  ASSERT_TRUE(entries);
  std::vector<std::string> actions;
  for (const store::AuditEntry& e : *entries) {
    actions.push_back(e.action);
    EXPECT_EQ(e.actor, "admin");
    EXPECT_EQ(e.request_id, "req-1");
    EXPECT_EQ(e.at_ms, kNow);
    EXPECT_EQ(e.after_json.find(std::string(a.at("secret").as_string())), std::string::npos);
    EXPECT_EQ(e.after_json.find(state().keys[0].sha256_hex), std::string::npos);
  }
  EXPECT_EQ(actions, (std::vector<std::string>{"key.revoke", "key.rotate", "key.enable",
                                               "key.disable", "key.create", "group.create"}));
  EXPECT_NE((*entries)[2].before_json.find("\"disabled\""), std::string::npos);
  EXPECT_NE((*entries)[2].after_json.find("\"rpm\":5"), std::string::npos);
  // An update that changes nothing commits nothing and audits nothing.
  ok(call("PATCH", "/admin/v1/groups/g", "{}"));
  EXPECT_EQ(sqlite_->list_audit({})->size(), 6u);
  const json::object listed = ok(call("GET", "/admin/v1/audit?object_id=" + id + "&limit=2"));
  ASSERT_EQ(listed.at("entries").as_array().size(), 2u);
  EXPECT_EQ(listed.at("entries").as_array()[0].at("action"), "key.revoke");
  EXPECT_EQ(listed.at("entries").as_array()[0].at("after").at("status"), "revoked");
  fails(call("GET", "/admin/v1/audit?since=yesterday"), 400, "invalid_parameter");
}

TEST_F(TenancyRoutesTest, AGroupWithItsKeysIsCreatedInOneCommitOrNotAtAll) {
  const Reply over = call("POST", "/admin/v1/groups",
                          R"({"name":"g","budget":{"amount_micros":100},"keys":[
                                {"name":"a","allocation_micros":60},
                                {"name":"b","allocation_micros":60}]})");
  fails(over, 409, "allocation_exceeds_budget");
  EXPECT_TRUE(state().groups.empty());
  EXPECT_TRUE(state().keys.empty());
  const Reply taken = call("POST", "/admin/v1/groups",
                           R"({"name":"g","keys":[{"name":"a"},{"name":"from-config"}]})");
  fails(taken, 409, "name_taken");
  EXPECT_NE(taken.text.find("keys[1].name"), std::string::npos) << taken.text;
  const json::object g = group(R"({"name":"g","budget":{"amount_micros":100},"keys":[
                                     {"name":"a","allocation_micros":60},{"name":"b"}]})");
  ASSERT_EQ(g.at("keys").as_array().size(), 2u);
  EXPECT_TRUE(g.at("keys").as_array()[0].as_object().at("secret").is_string());
  EXPECT_EQ(g.at("allocated_micros"), 60);
  EXPECT_EQ(state().revision, 1u) << "one commit";
  EXPECT_EQ(state().keys.size(), 2u);
  EXPECT_FALSE(group(R"({"name":"h"})").contains("keys")) << "no keys asked, none listed";
}

TEST_F(TenancyRoutesTest, AnIdempotencyKeyDoesTheChangeOnce) {
  group(R"({"name":"g"})");
  idempotency_key_ = "create-a";
  const json::object first = key(R"({"name":"a","group":"g"})");
  EXPECT_TRUE(first.at("secret").is_string());
  const json::object again = key(R"({"name":"a","group":"g"})");
  EXPECT_EQ(again.at("id"), first.at("id"));
  EXPECT_TRUE(again.at("secret").is_null()) << "the stored answer never holds the secret";
  EXPECT_TRUE(again.contains("secret_note"));
  EXPECT_EQ(state().keys.size(), 1u);
  fails(call("POST", "/admin/v1/keys", R"({"name":"b","group":"g"})"), 422,
        "idempotency_key_reused");
  EXPECT_EQ(state().keys.size(), 1u);
  idempotency_key_ = std::string(256, 'k');
  fails(call("POST", "/admin/v1/keys", R"({"name":"b","group":"g"})"), 400, "invalid_request");
}

// A group created with its keys under an Idempotency-Key: the stored answer (read from the
// table) and its replay hold no secret of any key, only the note that it was shown once.
TEST_F(TenancyRoutesTest, NoSecretIsStoredOrReplayedAtAnyDepth) {
  idempotency_key_ = "onboard";
  constexpr std::string_view kBody = R"({"name":"g","keys":[{"name":"a"},{"name":"b"}]})";
  const json::object first = group(kBody);
  std::vector<std::string> secrets;
  for (const json::value& k : first.at("keys").as_array()) {
    secrets.emplace_back(k.at("secret").as_string());
  }
  ASSERT_EQ(secrets.size(), 2u);
  auto stored = sqlite_->find_idempotent("onboard", now_);
  ASSERT_TRUE(stored && stored->has_value());
  const Reply replay = call("POST", "/admin/v1/groups", kBody);
  ASSERT_EQ(ok(replay, 201).at("keys").as_array().size(), 2u);
  for (std::size_t i = 0; i < secrets.size(); ++i) {
    EXPECT_EQ((*stored)->body.find(secrets[i]), std::string::npos) << "stored in plaintext";
    EXPECT_EQ(replay.text.find(secrets[i]), std::string::npos) << "replayed";
    const json::object& k = replay.object().at("keys").as_array()[i].as_object();
    EXPECT_EQ(k.at("id"), first.at("keys").as_array()[i].at("id"));
    EXPECT_TRUE(k.at("secret").is_null());
    EXPECT_TRUE(k.contains("secret_note"));
  }
  idempotency_key_ = "rotate";
  const std::string path = "/admin/v1/keys/" +
                           std::string(first.at("keys").as_array()[0].at("id").as_string()) +
                           "/rotate";
  const std::string rotated(ok(call("POST", path)).at("secret").as_string());
  EXPECT_EQ((*sqlite_->find_idempotent("rotate", now_))->body.find(rotated), std::string::npos);
  EXPECT_TRUE(ok(call("POST", path)).at("secret").is_null());
}

TEST_F(TenancyRoutesTest, AnIdempotentAnswerExpiresAfterItsRetention) {
  group(R"({"name":"g"})");
  idempotency_key_ = "create-a";
  const json::object first = key(R"({"name":"a","group":"g"})");
  now_ += store::kIdempotencyRetentionMs;
  EXPECT_EQ(key(R"({"name":"a","group":"g"})").at("id"), first.at("id")) << "still replayed";
  now_ += 1;
  fails(call("POST", "/admin/v1/keys", R"({"name":"a","group":"g"})"), 409, "name_taken");
}

TEST_F(TenancyRoutesTest, AConflictingCommitIsReReadAndReChecked) {
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

TEST_F(TenancyRoutesTest, WithoutAStoreTheRoutesSaySo) {
  Router router;
  TenancyRoutes none([]() -> Result<std::unique_ptr<store::Store>> { return nullptr; },
                     TenancyRoutes::Options{nullptr, [] { return kNow; }});
  none.add_to(router);
  auto match = router.find("GET", "/admin/v1/groups", nullptr);
  ASSERT_TRUE(match);
  Request request;
  request.method = "GET";
  request.path = "/admin/v1/groups";
  request.header = [](std::string_view) { return std::string_view(); };
  EXPECT_EQ(match->handler(request).status, 404);
}

}  // namespace
}  // namespace sluice::admin
