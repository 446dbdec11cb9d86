// One suite, run against every backend: SQLite (a temp file) and PostgreSQL at
// SLUICE_TEST_POSTGRES_URL (scripts/test-services.sh; each test in a schema of its own).
// Without the variable the PostgreSQL cases skip, or fail when SLUICE_REQUIRE_POSTGRES=1
// (scripts/run-tests.sh), so `make test` cannot pass without having run them.

#include "store/store.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <functional>
#include <future>
#include <latch>
#include <map>
#include <set>
#include <span>
#include <string>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sqlite3.h>
#include <sys/socket.h>
#include <unistd.h>

#include "config/config.h"
#include "store/migrations.h"
#include "store/postgres_store.h"
#include "store/sqlite_store.h"
#include "store/tenancy_sql.h"
#include "store/usage_fields.h"

namespace sluice::store {
namespace {

constexpr std::int64_t kDay = 86'400'000;
// 2026-11-30T00:00:00Z
constexpr std::int64_t kNov30 = 1'795'996'800'000;

std::int64_t wall_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

UsageRecord record(std::string id, std::int64_t started_at_ms) {
  UsageRecord r;
  r.record_id = id;
  r.request_id = "req-" + id;
  r.started_at_ms = started_at_ms;
  r.ended_at_ms = started_at_ms + 1500;
  r.key_name = "team-a";
  r.key_id = "key_team-a";
  r.feature = "chat";
  r.ingress = "openai_chat";
  r.operation = "chat";
  r.alias = "fast";
  r.provider = "openai";
  r.model = "gpt-4o-mini";
  r.usage_reported = true;
  r.input_tokens = 100;
  r.output_tokens = 20;
  r.status = 200;
  r.outcome = "complete";
  r.finish_reason = "stop";
  r.total_us = 1'500'000;
  r.priced = true;
  r.price_version = "2026-11-01";
  r.cost_micros = 1000;
  r.cost_items = R"([{"item":"input","tokens":100,"rate":"0.15","micros":15}])";
  return r;
}

// SQLite test databases live in a directory per test process, removed when it ends.
std::filesystem::path sqlite_dir() {
  return std::filesystem::temp_directory_path() /
         ("sluice-store-test-" + std::to_string(::getpid()));
}

class RemoveSqliteDir : public ::testing::Environment {
 public:
  void TearDown() override {
    std::error_code ignored;
    std::filesystem::remove_all(sqlite_dir(), ignored);
  }
};
[[maybe_unused]] const auto* const kRemoveSqliteDir =
    ::testing::AddGlobalTestEnvironment(new RemoveSqliteDir);

// Opens a fresh, empty store of one backend; `reopen` connects once more to the database
// `open` made for `test`, as it is.
struct Backend {
  std::string name;
  std::function<Result<std::unique_ptr<Store>>(const std::string& test)> open;
  std::function<Result<std::unique_ptr<Store>>(const std::string& test)> reopen;
};

void PrintTo(const Backend& b, std::ostream* os) { *os << b.name; }

// "Suite.Test/backend" as a file or schema name.
std::string test_slug() {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string slug = std::string(info->name());
  for (char& c : slug) {
    if (!std::isalnum(static_cast<unsigned char>(c))) {
      c = '_';
    }
  }
  return slug;
}

class StoreTest : public ::testing::TestWithParam<Backend> {
 protected:
  void SetUp() override {
    auto opened = GetParam().open(test_slug());
    if (!opened) {
      if (opened.error().kind() == ErrorKind::kNotFound) {
        if (const char* require = std::getenv("SLUICE_REQUIRE_POSTGRES");
            require != nullptr && std::string_view(require) == "1") {
          FAIL() << opened.error().message() << " (SLUICE_REQUIRE_POSTGRES=1)";
        }
        GTEST_SKIP() << opened.error().message();
      }
      FAIL() << opened.error().message();
    }
    store_ = std::move(*opened);
    auto migrated = store_->migrate();
    ASSERT_TRUE(migrated) << migrated.error().message();
  }

  void insert(std::vector<UsageRecord> records) {
    auto r = store_->insert_usage(records);
    ASSERT_TRUE(r) << r.error().message();
  }
  std::vector<UsageRow> query(const UsageQuery& q) {
    auto rows = store_->query_usage(q);
    EXPECT_TRUE(rows) << rows.error().message();
    return rows ? *rows : std::vector<UsageRow>{};
  }
  std::uint64_t count() {
    auto n = store_->count_usage();
    EXPECT_TRUE(n) << n.error().message();
    return n ? *n : 0;
  }

  std::unique_ptr<Store> store_;
};

TEST_P(StoreTest, MigrateTwiceIsANoOp) {
  insert({record("a", kNov30)});
  auto again = store_->migrate();
  ASSERT_TRUE(again) << again.error().message();
  EXPECT_EQ(count(), 1u) << "a second migrate must not recreate tables";
  EXPECT_TRUE(store_->ping());
}

Result<void> migrate_with(Store& store, std::span<const Migration> list) {
  if (auto* sqlite = dynamic_cast<SqliteStore*>(&store)) {
    return sqlite->migrate_with_for_test(list);
  }
  return dynamic_cast<PostgresStore&>(store).migrate_with_for_test(list);
}

Result<void> execute(Store& store, const std::string& sql) {
  if (auto* sqlite = dynamic_cast<SqliteStore*>(&store)) {
    return sqlite->execute_for_test(sql);
  }
  return dynamic_cast<PostgresStore&>(store).execute_for_test(sql);
}

// Two gateways starting together on a new database: each migration is applied once (none of
// them may run twice: CREATE TABLE without IF NOT EXISTS), whichever store gets there first.
// The first migration takes a moment, so the second store arrives while the first holds the
// schema; without the dialect's lock one of them fails.
TEST_P(StoreTest, TwoStoresMigratingAtOnceApplyEachMigrationOnce) {
  const std::string database = test_slug() + "_new";
  auto first = GetParam().open(database);
  ASSERT_TRUE(first) << first.error().message();
  auto second = GetParam().reopen(database);
  ASSERT_TRUE(second) << second.error().message();
  const Dialect dialect = store_->kind() == "sqlite" ? Dialect::kSqlite : Dialect::kPostgres;
  std::vector<Migration> list = {
      {0, "slow_start",
       "CREATE TABLE slow_start AS WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n "
       "WHERE i < 300000) SELECT i FROM n"}};
  for (const Migration& m : migrations(dialect)) {
    list.push_back(m);
  }
  std::latch start(2);
  auto migrate = [&](Store& store) {
    start.arrive_and_wait();
    return migrate_with(store, list);
  };
  auto a = std::async(std::launch::async, migrate, std::ref(**first));
  auto b = std::async(std::launch::async, migrate, std::ref(**second));
  const Result<void> ra = a.get();
  const Result<void> rb = b.get();
  EXPECT_TRUE(ra) << ra.error().message();
  EXPECT_TRUE(rb) << rb.error().message();
  for (Store* store : {first->get(), second->get()}) {
    auto again = store->migrate();
    EXPECT_TRUE(again) << again.error().message();
  }
  ASSERT_TRUE((*first)->insert_usage(std::vector<UsageRecord>{record("once", kNov30)}));
  EXPECT_EQ(*(*second)->count_usage(), 1u);
}

// A migration that fails is named, and takes the ones before it in the same run with it: the
// schema stays where it was and nothing is recorded, so the next start tries them again.
TEST_P(StoreTest, AFailingMigrationIsNamedAndLeavesTheSchemaWhereItWas) {
  static constexpr Migration kList[] = {
      {901, "one", "CREATE TABLE t_one (x INTEGER)"},
      {902, "bad", "CREATE TABLE t_two (x INTEGER); INSERT INTO t_missing VALUES (1)"},
  };
  auto r = migrate_with(*store_, kList);
  ASSERT_FALSE(r);
  EXPECT_TRUE(r.error().message().starts_with("migration 902_bad: ")) << r.error().message();
  EXPECT_NE(r.error().message().find("t_missing"), std::string::npos) << r.error().message();
  EXPECT_FALSE(execute(*store_, "SELECT 1 FROM t_one")) << "901 is rolled back with 902";
  EXPECT_FALSE(execute(*store_, "SELECT 1 FROM t_two"));
  auto retried = migrate_with(*store_, std::span(kList).first(1));
  ASSERT_TRUE(retried) << "901 was not recorded: " << retried.error().message();
  EXPECT_TRUE(execute(*store_, "SELECT 1 FROM t_one"));
  EXPECT_TRUE(store_->ping());
}

TEST_P(StoreTest, ReplayingABatchStoresEachRecordOnce) {
  const std::vector<UsageRecord> batch = {record("a", kNov30), record("b", kNov30 + 1)};
  insert(batch);
  insert(batch);
  insert({record("b", kNov30 + 1), record("c", kNov30 + 2)});
  EXPECT_EQ(count(), 3u);
}

TEST_P(StoreTest, ABatchWithARecordTheStoreRefusesStoresNothing) {
  UsageRecord bad = record("", kNov30);  // record_id must not be empty (CHECK constraint)
  const std::vector<UsageRecord> batch = {record("a", kNov30), record("b", kNov30), bad};
  auto r = store_->insert_usage(batch);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().kind(), ErrorKind::kBadRequest)
      << "refused for its data: " << r.error().message();
  EXPECT_EQ(count(), 0u) << "the good records before the bad one were rolled back";

  UsageRecord huge = record("c", kNov30);
  huge.input_tokens = std::uint64_t{1} << 63;  // above BIGINT
  const std::vector<UsageRecord> batch2 = {record("d", kNov30), huge};
  auto r2 = store_->insert_usage(batch2);
  ASSERT_FALSE(r2);
  EXPECT_EQ(r2.error().kind(), ErrorKind::kBadRequest) << r2.error().message();
  EXPECT_EQ(count(), 0u);
  insert({record("a", kNov30)});
  EXPECT_EQ(count(), 1u) << "the store is usable after a failed batch";
}

// PostgreSQL's text cannot hold a NUL byte; an upstream's finish reason may carry one. It is
// kept (SQLite) or replaced by U+FFFD (PostgreSQL), never a reason to refuse the batch.
TEST_P(StoreTest, ANulByteIsKeptOrReplacedNeverRefused) {
  UsageRecord r = record("nul", kNov30);
  r.finish_reason = std::string("st\0op", 5);
  insert({r});
  auto found = store_->find_usage("req-nul");
  ASSERT_TRUE(found && found->has_value());
  EXPECT_EQ((*found)->finish_reason,
            store_->kind() == "sqlite" ? r.finish_reason : std::string("st\xEF\xBF\xBDop"));
}

TEST_P(StoreTest, ALargeBatchIsStoredOnceAndAllOrNothing) {
  // Larger than the usage sink's batches, with a record repeated inside the batch.
  std::vector<UsageRecord> batch;
  for (int i = 0; i < 1200; ++i) {
    batch.push_back(record("big-" + std::to_string(i), kNov30 + i));
  }
  batch.push_back(record("big-5", kNov30 + 5));
  insert(batch);
  EXPECT_EQ(count(), 1200u);

  // The refused record is the last: the 1,099 before it must be rolled back too.
  std::vector<UsageRecord> failing;
  for (int i = 0; i < 1100; ++i) {
    failing.push_back(record("late-" + std::to_string(i), kNov30 + i));
  }
  failing.back().record_id.clear();
  auto refused = store_->insert_usage(failing);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message().find("record_id"), std::string::npos)
      << "the message names the constraint: " << refused.error().message();
  EXPECT_EQ(count(), 1200u);
}

TEST_P(StoreTest, EveryFieldRoundTrips) {
  UsageRecord r = record("rt-1", kNov30 + 123);
  // What an array literal or a CSV would have to escape (PostgreSQL sends the batch as arrays):
  // a bare NULL, quotes, backslashes, braces, commas, outer spaces.
  r.key_group = "NULL";
  r.tenant = " ac\\me {x,y} \"z\" ";
  r.feature = "summarise \"quoted\" é";
  r.ingress = "anthropic";
  r.operation = "chat";
  r.stream = true;
  r.input_tokens = 5'000'000'000ULL;
  r.output_tokens = 7;
  r.cache_read_tokens = 3;
  r.cache_write_tokens = 4;
  r.reasoning_tokens = 5;
  r.status = 200;
  r.outcome = "truncated";
  r.error_class = "";
  r.finish_reason = "length";
  r.total_us = 9'000'001;
  r.overhead_us = 311;
  r.queue_us = 12;
  r.upstream_ttfb_us = 800'000;
  r.ttft_us = 850'000;
  r.output_tokens_per_s_milli = 41'250;
  r.price_version = "v7";
  r.currency = "EUR";
  r.cost_micros = 9'223'372'036'854'775LL;
  r.saved_input_tokens = 6'000'000'000ULL;
  r.saved_output_tokens = 8;
  r.saved_cost_micros = 123'456;
  r.guardrails = "pii/email:redact=2,out:no-cards/payment_card:block=1";
  AttemptRecord a1;
  a1.provider = "openai";
  a1.model = "gpt-4o";
  a1.path = "0.1";
  a1.status = 503;
  a1.error_class = "upstream_status";
  a1.acquire_us = 10;
  a1.first_byte_us = 20'000;
  a1.duration_us = 20'500;
  a1.backoff_ms = 0;
  a1.reused_connection = true;
  AttemptRecord a2;
  a2.provider = "anthropic";
  a2.model = "claude";
  a2.path = "1";
  a2.status = 200;
  a2.backoff_ms = 250;
  r.attempts = {a1, a2};
  insert({r});

  auto found = store_->find_usage("req-rt-1");
  ASSERT_TRUE(found) << found.error().message();
  ASSERT_TRUE(found->has_value());
  const UsageRecord& g = **found;
  EXPECT_EQ(g.record_id, r.record_id);
  EXPECT_EQ(g.request_id, r.request_id);
  EXPECT_EQ(g.started_at_ms, r.started_at_ms);
  EXPECT_EQ(g.ended_at_ms, r.ended_at_ms);
  EXPECT_EQ(g.key_name, r.key_name);
  EXPECT_EQ(g.key_group, r.key_group);
  EXPECT_EQ(g.tenant, r.tenant);
  EXPECT_EQ(g.feature, r.feature);
  EXPECT_EQ(g.ingress, r.ingress);
  EXPECT_EQ(g.operation, r.operation);
  EXPECT_EQ(g.alias, r.alias);
  EXPECT_EQ(g.provider, r.provider);
  EXPECT_EQ(g.model, r.model);
  EXPECT_EQ(g.stream, r.stream);
  EXPECT_EQ(g.usage_reported, r.usage_reported);
  EXPECT_EQ(g.input_tokens, r.input_tokens);
  EXPECT_EQ(g.output_tokens, r.output_tokens);
  EXPECT_EQ(g.cache_read_tokens, r.cache_read_tokens);
  EXPECT_EQ(g.cache_write_tokens, r.cache_write_tokens);
  EXPECT_EQ(g.reasoning_tokens, r.reasoning_tokens);
  EXPECT_EQ(g.status, r.status);
  EXPECT_EQ(g.outcome, r.outcome);
  EXPECT_EQ(g.error_class, r.error_class);
  EXPECT_EQ(g.finish_reason, r.finish_reason);
  EXPECT_EQ(g.total_us, r.total_us);
  EXPECT_EQ(g.overhead_us, r.overhead_us);
  EXPECT_EQ(g.queue_us, r.queue_us);
  EXPECT_EQ(g.upstream_ttfb_us, r.upstream_ttfb_us);
  EXPECT_EQ(g.ttft_us, r.ttft_us);
  EXPECT_EQ(g.output_tokens_per_s_milli, r.output_tokens_per_s_milli);
  EXPECT_EQ(g.priced, r.priced);
  EXPECT_EQ(g.price_version, r.price_version);
  EXPECT_EQ(g.currency, r.currency);
  EXPECT_EQ(g.cost_micros, r.cost_micros);
  EXPECT_EQ(g.cost_items, r.cost_items) << "cost items are kept byte for byte";
  EXPECT_EQ(g.guardrails, r.guardrails);
  ASSERT_EQ(g.attempts.size(), 2u);
  for (std::size_t i = 0; i < 2; ++i) {
    const AttemptRecord& want = r.attempts[i];
    const AttemptRecord& got = g.attempts[i];
    EXPECT_EQ(got.provider, want.provider);
    EXPECT_EQ(got.model, want.model);
    EXPECT_EQ(got.path, want.path);
    EXPECT_EQ(got.status, want.status);
    EXPECT_EQ(got.error_class, want.error_class);
    EXPECT_EQ(got.acquire_us, want.acquire_us);
    EXPECT_EQ(got.first_byte_us, want.first_byte_us);
    EXPECT_EQ(got.duration_us, want.duration_us);
    EXPECT_EQ(got.backoff_ms, want.backoff_ms);
    EXPECT_EQ(got.reused_connection, want.reused_connection);
  }

  auto missing = store_->find_usage("no-such-request");
  ASSERT_TRUE(missing);
  EXPECT_FALSE(missing->has_value());
}

TEST_P(StoreTest, FindReturnsTheNewestRecordOfAReusedRequestId) {
  UsageRecord older = record("x1", kNov30);
  UsageRecord newer = record("x2", kNov30 + 5000);
  newer.request_id = older.request_id;
  newer.model = "newer-model";
  insert({newer, older});
  auto found = store_->find_usage(older.request_id);
  ASSERT_TRUE(found && found->has_value());
  EXPECT_EQ((*found)->model, "newer-model");
}

// The suite's reference: what query_usage must return for `q` over `records`, computed here in
// C++ (filters, grouping, sums, UTC buckets) so each backend's SQL is checked against it.
std::string utc_bucket(std::int64_t ms, bool day) {
  const std::time_t t = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, day ? "%Y-%m-%d" : "%Y-%m-%dT%H", &tm);
  return buf;
}

std::string dimension_value(const UsageRecord& r, Dimension d) {
  switch (d) {
    case Dimension::kKey:
      return r.key_name;
    case Dimension::kKeyGroup:
      return r.key_group;
    case Dimension::kTenant:
      return r.tenant;
    case Dimension::kFeature:
      return r.feature;
    case Dimension::kAlias:
      return r.alias;
    case Dimension::kProvider:
      return r.provider;
    case Dimension::kModel:
      return r.model;
    case Dimension::kOutcome:
      return r.outcome;
    case Dimension::kDay:
      return utc_bucket(r.started_at_ms, true);
    case Dimension::kHour:
      return utc_bucket(r.started_at_ms, false);
  }
  return {};
}

std::vector<UsageRow> expected_rows(const std::vector<UsageRecord>& records, const UsageQuery& q) {
  std::map<std::vector<std::string>, UsageRow> groups;
  for (const UsageRecord& r : records) {
    if (r.started_at_ms < q.from_ms || r.started_at_ms >= q.to_ms) {
      continue;
    }
    bool match = true;
    for (const auto& [d, v] : q.where) {
      match = match && dimension_value(r, d) == v;
    }
    if (!match) {
      continue;
    }
    std::vector<std::string> key;
    for (Dimension d : q.group_by) {
      key.push_back(dimension_value(r, d));
    }
    UsageRow& row = groups[key];
    row.group = key;
    ++row.requests;
    row.failed += r.outcome == "upstream_error" || r.outcome == "midstream_error";
    row.input_tokens += r.input_tokens;
    row.output_tokens += r.output_tokens;
    row.cache_read_tokens += r.cache_read_tokens;
    row.cache_write_tokens += r.cache_write_tokens;
    row.reasoning_tokens += r.reasoning_tokens;
    if (r.priced) {
      row.cost_micros += r.cost_micros;
    } else {
      ++row.unaccounted;
    }
  }
  std::vector<UsageRow> rows;
  for (auto& [key, row] : groups) {
    rows.push_back(row);
  }
  if (rows.empty() && q.group_by.empty()) {
    rows.emplace_back();
  }
  // Ties keep the map's byte order of the group values, as the backends order them.
  std::stable_sort(rows.begin(), rows.end(), [](const UsageRow& a, const UsageRow& b) {
    if (a.cost_micros != b.cost_micros) {
      return a.cost_micros > b.cost_micros;
    }
    return a.requests > b.requests;
  });
  if (rows.size() > q.limit) {
    rows.resize(q.limit);
  }
  return rows;
}

std::string describe(const std::vector<UsageRow>& rows) {
  std::string out;
  for (const UsageRow& r : rows) {
    out += "[";
    for (const std::string& g : r.group) {
      out += g + "|";
    }
    out += "] req=" + std::to_string(r.requests) + " failed=" + std::to_string(r.failed) +
           " in=" + std::to_string(r.input_tokens) + " out=" + std::to_string(r.output_tokens) +
           " cr=" + std::to_string(r.cache_read_tokens) +
           " cw=" + std::to_string(r.cache_write_tokens) +
           " rs=" + std::to_string(r.reasoning_tokens) + " cost=" + std::to_string(r.cost_micros) +
           " unaccounted=" + std::to_string(r.unaccounted) + "\n";
  }
  return out;
}

// Five days of varied traffic across UTC midnights: every dimension takes several values.
std::vector<UsageRecord> sample_records() {
  std::vector<UsageRecord> out;
  const char* keys[] = {"team-a", "team-b", "team-c"};
  const char* groups[] = {"research", "product"};
  const char* models[][2] = {
      {"openai", "gpt-4o"}, {"anthropic", "claude-sonnet"}, {"openai", "gpt-4o-mini"}};
  const char* features[] = {"chat", "search", ""};
  const char* outcomes[] = {"complete",       "complete",        "truncated",
                            "upstream_error", "midstream_error", "client_gone"};
  for (int i = 0; i < 60; ++i) {
    UsageRecord r = record(fmt::format("s{}", i), kNov30 - 3 * kDay + i * 7'300'000LL);
    r.key_name = keys[i % 3];
    r.key_group = groups[i % 2];
    r.tenant = i % 5 == 0 ? "acme" : "";
    r.feature = features[(i / 2) % 3];
    r.alias = i % 4 == 0 ? "smart" : "fast";
    r.provider = models[i % 3][0];
    r.model = models[i % 3][1];
    r.outcome = outcomes[i % 6];
    r.input_tokens = 100 + i * 13;
    r.output_tokens = 10 + i;
    r.cache_read_tokens = i % 7;
    r.cache_write_tokens = i % 3;
    r.reasoning_tokens = i % 4;
    r.priced = i % 9 != 4;
    r.cost_micros = 1000 + i * 37;  // also on unpriced ones: it must not be summed
    out.push_back(r);
  }
  return out;
}

TEST_P(StoreTest, GroupsByEachDimensionLikeTheReference) {
  const auto records = sample_records();
  insert(records);
  for (Dimension d : {Dimension::kKey, Dimension::kKeyGroup, Dimension::kTenant,
                      Dimension::kFeature, Dimension::kAlias, Dimension::kProvider,
                      Dimension::kModel, Dimension::kOutcome, Dimension::kDay, Dimension::kHour}) {
    UsageQuery q;
    q.group_by = {d};
    EXPECT_EQ(describe(query(q)), describe(expected_rows(records, q))) << to_string(d);
  }
  UsageQuery two;
  two.group_by = {Dimension::kKey, Dimension::kModel};
  EXPECT_EQ(describe(query(two)), describe(expected_rows(records, two)));
  UsageQuery total;
  EXPECT_EQ(describe(query(total)), describe(expected_rows(records, total)));
}

TEST_P(StoreTest, FiltersAreExactAndCombine) {
  const auto records = sample_records();
  insert(records);
  UsageQuery q;
  q.where = {{Dimension::kKey, "team-b"}, {Dimension::kModel, "claude-sonnet"}};
  q.group_by = {Dimension::kFeature};
  const auto rows = query(q);
  EXPECT_FALSE(rows.empty());
  EXPECT_EQ(describe(rows), describe(expected_rows(records, q)));
  q.where = {{Dimension::kKey, "team"}};  // no prefix matching
  q.group_by = {};
  ASSERT_EQ(query(q).size(), 1u);
  EXPECT_EQ(query(q)[0].requests, 0u);
  q.where = {{Dimension::kFeature, ""}, {Dimension::kOutcome, "upstream_error"}};
  q.group_by = {Dimension::kProvider};
  EXPECT_EQ(describe(query(q)), describe(expected_rows(records, q)));

  UsageQuery by_day;
  by_day.where = {{Dimension::kDay, "2026-11-30"}};
  auto refused = store_->query_usage(by_day);
  EXPECT_FALSE(refused);
  EXPECT_EQ(refused.error().kind(), ErrorKind::kBadRequest);
}

// Reports read whole minutes from usage_rollup and the partial minutes at a range's ends from
// the ledger: for any range the rows equal a sum over the records, replays counted once.
TEST_P(StoreTest, ReportsEqualTheLedgerForAnyRange) {
  auto records = sample_records();
  // Several records inside a few minutes, at offsets that split them.
  for (int i = 0; i < 24; ++i) {
    UsageRecord r = record(fmt::format("m{}", i), kNov30 + 59'000 + i * 7'919);
    r.key_name = i % 2 == 0 ? "team-a" : "team-d";
    r.outcome = i % 5 == 0 ? "upstream_error" : "complete";
    r.input_tokens = 7 + i;
    r.priced = i % 4 != 0;
    r.cost_micros = 100 + i;
    records.push_back(r);
  }
  records.push_back(record("early", -90'001));  // before the epoch: floored, not truncated
  insert(records);
  insert({records[3], records[70]});  // a replay adds nothing

  const std::int64_t kMinute = 60'000;
  const std::pair<std::int64_t, std::int64_t> ranges[] = {
      {0, INT64_MAX},
      {INT64_MIN, INT64_MAX},
      {-100'000, kNov30},
      {kNov30, kNov30 + kMinute},                   // one whole minute
      {kNov30 + 59'000, kNov30 + 3 * kMinute + 1},  // partial, whole, whole, partial
      {kNov30 + 60'001, kNov30 + 119'999},          // inside one minute
      {kNov30 + 61'000, kNov30 + 61'000},           // empty
      {kNov30 + 200'000, kNov30 + 100'000},         // reversed
      {kNov30 - 3 * 86'400'000LL + 1, kNov30 + 86'400'000LL - 1},
      {INT64_MAX - 10, INT64_MAX},
  };
  for (const auto& [from, to] : ranges) {
    for (const std::vector<Dimension>& group_by :
         {std::vector<Dimension>{}, {Dimension::kKey, Dimension::kOutcome}, {Dimension::kHour}}) {
      UsageQuery q;
      q.from_ms = from;
      q.to_ms = to;
      q.group_by = group_by;
      EXPECT_EQ(describe(query(q)), describe(expected_rows(records, q)))
          << "[" << from << ", " << to << ") by " << group_by.size() << " dimensions";
    }
    UsageQuery filtered;
    filtered.from_ms = from;
    filtered.to_ms = to;
    filtered.where = {{Dimension::kKey, "team-a"}};
    filtered.group_by = {Dimension::kModel};
    EXPECT_EQ(describe(query(filtered)), describe(expected_rows(records, filtered)))
        << "[" << from << ", " << to << ") key team-a";
  }
}

// Migration 004 fills usage_rollup from the ledger as it stood: run its INSERT again over an
// emptied rollup and the reports still equal the records.
TEST_P(StoreTest, TheRollupMigrationSumsTheLedgerAsItStood) {
  const bool sqlite = store_->kind() == "sqlite";
  if (sqlite) {
    GTEST_SKIP() << "SQLite keeps no ledger table after migration 005: "
                    "SqliteSegments.ADatabaseWrittenBeforeTheSegmentsKeepsEveryRecord runs 004";
  }
  const auto records = sample_records();
  insert(records);
  const Dialect dialect = sqlite ? Dialect::kSqlite : Dialect::kPostgres;
  std::string backfill;
  for (const Migration& m : migrations(dialect)) {
    if (m.version == 4) {
      const std::size_t at = m.sql.find("INSERT INTO usage_rollup");
      ASSERT_NE(at, std::string_view::npos);
      backfill = std::string(m.sql.substr(at, m.sql.find(';', at) + 1 - at));
    }
  }
  ASSERT_FALSE(backfill.empty());
  auto exec = [&](const std::string& sql) {
    auto r = sqlite ? static_cast<SqliteStore&>(*store_).execute_for_test(sql)
                    : static_cast<PostgresStore&>(*store_).execute_for_test(sql);
    ASSERT_TRUE(r) << r.error().message();
  };
  exec("DELETE FROM usage_rollup");
  UsageQuery total;
  EXPECT_EQ(query(total)[0].requests, 0u) << "reports read the rollup";
  exec(backfill);
  for (const std::vector<Dimension>& group_by :
       {std::vector<Dimension>{}, {Dimension::kKey, Dimension::kOutcome, Dimension::kDay}}) {
    UsageQuery q;
    q.group_by = group_by;
    EXPECT_EQ(describe(query(q)), describe(expected_rows(records, q)));
  }
}

TEST_P(StoreTest, ExportGivesEveryRecordOfTheRangeWhole) {
  auto records = sample_records();
  AttemptRecord failed;
  failed.provider = "openai";
  failed.model = "gpt-4o";
  failed.path = "0";
  failed.status = 503;
  failed.error_class = "upstream_5xx";
  failed.acquire_us = 4;
  failed.duration_us = 900;
  AttemptRecord answered = failed;
  answered.path = "1";
  answered.status = 200;
  answered.error_class = "";
  answered.reused_connection = true;
  records[12].attempts = {failed, answered};
  insert(records);
  const std::int64_t from = records[10].started_at_ms;
  const std::int64_t to = records[40].started_at_ms + 1;  // a partial minute at each end
  std::map<std::string, UsageRecord> seen;
  std::int64_t previous = INT64_MIN;
  auto r = store_->export_usage(from, to, [&](const UsageRecord& record) {
    EXPECT_GE(record.started_at_ms, previous) << "oldest first";
    previous = record.started_at_ms;
    EXPECT_TRUE(seen.emplace(record.record_id, record).second) << record.record_id << " twice";
    return true;
  });
  ASSERT_TRUE(r) << r.error().message();
  ASSERT_EQ(seen.size(), 31u) << "records 10..40";
  for (int i = 10; i <= 40; ++i) {
    const auto it = seen.find(records[i].record_id);
    ASSERT_NE(it, seen.end()) << records[i].record_id;
    EXPECT_EQ(encode_attempts(it->second.attempts), encode_attempts(records[i].attempts));
    EXPECT_EQ(it->second.request_id, records[i].request_id);
    EXPECT_EQ(it->second.cost_micros, records[i].cost_micros);
    EXPECT_EQ(it->second.cost_items, records[i].cost_items);
    EXPECT_EQ(it->second.input_tokens, records[i].input_tokens);
  }
  int calls = 0;
  ASSERT_TRUE(
      store_->export_usage(INT64_MIN, INT64_MAX, [&](const UsageRecord&) { return ++calls < 5; }));
  EXPECT_EQ(calls, 5) << "stops when asked";
}

TEST_P(StoreTest, TimeRangeIncludesFromAndExcludesTo) {
  insert({record("before", kNov30 - 1), record("at-from", kNov30), record("inside", kNov30 + 10),
          record("at-to", kNov30 + kDay), record("after", kNov30 + kDay + 1)});
  UsageQuery q;
  q.from_ms = kNov30;
  q.to_ms = kNov30 + kDay;
  const auto rows = query(q);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].requests, 2u) << "at-from and inside";
  q.to_ms = kNov30;
  EXPECT_EQ(query(q)[0].requests, 0u) << "an empty range";
}

TEST_P(StoreTest, UnaccountedRecordsAreCountedNeverSummedIntoCost) {
  UsageRecord priced = record("p", kNov30);
  priced.cost_micros = 12'345'678;
  UsageRecord unpriced = record("u", kNov30);
  unpriced.priced = false;
  unpriced.cost_micros = 999'999;  // a bug upstream must not turn into spend
  UsageRecord unpriced2 = record("u2", kNov30);
  unpriced2.priced = false;
  unpriced2.model = "other";
  insert({priced, unpriced, unpriced2});
  UsageQuery q;
  q.group_by = {Dimension::kModel};
  const auto rows = query(q);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].group[0], "gpt-4o-mini");
  EXPECT_EQ(rows[0].cost_micros, 12'345'678);
  EXPECT_EQ(rows[0].unaccounted, 1u);
  EXPECT_EQ(rows[0].requests, 2u);
  EXPECT_EQ(rows[1].group[0], "other");
  EXPECT_EQ(rows[1].cost_micros, 0);
  EXPECT_EQ(rows[1].unaccounted, 1u);
}

// What answers served without an upstream call saved is summed per group, in whole minutes (the
// rollup) and at a range's ends (the ledger) alike, and never counted as spend.
TEST_P(StoreTest, SavingsAreSummedApartFromCost) {
  UsageRecord paid = record("paid", kNov30 + 150'000);
  paid.outcome = "complete";
  paid.input_tokens = 100;
  paid.output_tokens = 20;
  paid.cost_micros = 1'500;
  std::vector<UsageRecord> hits;
  for (int i = 0; i < 3; ++i) {
    UsageRecord hit = record("hit-" + std::to_string(i), kNov30 + 61'000 * i);
    hit.outcome = "cache_hit";
    hit.input_tokens = 0;
    hit.output_tokens = 0;
    hit.cost_micros = 0;
    hit.saved_input_tokens = 100;
    hit.saved_output_tokens = 20;
    hit.saved_cost_micros = 1'500;
    hits.push_back(hit);
  }
  hits.push_back(paid);
  insert(hits);
  for (const std::int64_t from : {kNov30, kNov30 + 30'000}) {
    UsageQuery q;
    q.from_ms = from;
    q.to_ms = kNov30 + 200'000;
    q.group_by = {Dimension::kOutcome};
    const auto rows = query(q);
    ASSERT_EQ(rows.size(), 2u);
    const UsageRow& hit_row = rows[0].group[0] == "cache_hit" ? rows[0] : rows[1];
    const UsageRow& paid_row = rows[0].group[0] == "cache_hit" ? rows[1] : rows[0];
    const std::uint64_t expected = from == kNov30 ? 3 : 2;  // the first hit is before `from`
    EXPECT_EQ(hit_row.requests, expected);
    EXPECT_EQ(hit_row.saved_input_tokens, 100 * expected);
    EXPECT_EQ(hit_row.saved_output_tokens, 20 * expected);
    EXPECT_EQ(hit_row.saved_cost_micros, static_cast<std::int64_t>(1'500 * expected));
    EXPECT_EQ(hit_row.cost_micros, 0);
    EXPECT_EQ(paid_row.saved_input_tokens, 0u);
    EXPECT_EQ(paid_row.cost_micros, 1'500);
  }
}

// Budgets read spend from the per-quarter-hour rollup that insert_usage keeps; it must equal a
// sum over the ledger (Store::spend_since, the base version) for any start, aligned or not.
// A batch whose records are each a tuple of their own: the rollup and spend entries go up in
// several statements (PostgreSQL: 1,000 per upsert) and still add up to the ledger, once.
TEST_P(StoreTest, ABatchOfManyTuplesAddsUpLikeTheLedger) {
  std::vector<UsageRecord> batch;
  for (int i = 0; i < 2'500; ++i) {
    UsageRecord r = record(fmt::format("t{}", i), kNov30 + i * 50);  // across three minutes
    r.key_name = fmt::format("key-{:04}", i);
    r.key_id = fmt::format("key_{:04}", i % 1'000);  // a rename: names differ, the id is one
    r.key_group = fmt::format("group-{}", i % 7);
    r.input_tokens = 1 + i;
    r.cost_micros = 1000 + i;
    r.priced = i % 11 != 0;
    batch.push_back(r);
  }
  insert(batch);
  insert(batch);  // a replay adds nothing
  UsageQuery q;
  q.group_by = {Dimension::kKey};
  q.limit = 3'000;
  EXPECT_EQ(describe(query(q)), describe(expected_rows(batch, q)));
  q.group_by = {Dimension::kKeyGroup, Dimension::kOutcome};
  EXPECT_EQ(describe(query(q)), describe(expected_rows(batch, q)));
  auto spend = store_->spend_since(kNov30);
  auto reference = store_->Store::spend_since(kNov30);  // summed from the ledger
  ASSERT_TRUE(spend && reference);
  std::map<std::pair<std::string, std::string>, std::int64_t> by_key;
  std::map<std::pair<std::string, std::string>, std::int64_t> want_by_key;
  std::int64_t total = 0;
  for (const SpendRow& row : *spend) {
    by_key[{row.key_group, row.key_id}] += row.cost_micros;
    total += row.cost_micros;
  }
  for (const SpendRow& row : *reference) {
    want_by_key[{row.key_group, row.key_id}] += row.cost_micros;
  }
  EXPECT_EQ(by_key, want_by_key);
  std::int64_t want = 0;
  for (const UsageRecord& r : batch) {
    want += r.priced ? r.cost_micros : 0;
  }
  EXPECT_EQ(total, want);
}

TEST_P(StoreTest, SpendSinceEqualsTheLedgerAndCountsEachRecordOnce) {
  constexpr std::int64_t kMin = 60'000;
  auto spent = [](std::string id, std::int64_t at, std::string group, std::string key,
                  std::int64_t micros) {
    UsageRecord r = record(std::move(id), at);
    r.key_group = std::move(group);
    r.key_id = std::move(key);
    r.key_name = "name-" + r.key_id;
    r.cost_micros = micros;
    return r;
  };
  UsageRecord unpriced = spent("u", kNov30 + 11 * kMin, "g1", "a", 999);
  unpriced.priced = false;
  const std::vector<UsageRecord> batch = {
      spent("old", kNov30 - kMin, "g1", "a", 7),
      spent("a1", kNov30 + 10 * kMin, "g1", "a", 1000),
      spent("a2", kNov30 + 40 * kMin, "g1", "a", 30),
      spent("b1", kNov30 + 20 * kMin, "g1", "b", 500),
      spent("c1", kNov30 + 10 * kMin, "g2", "c", 2),
      unpriced,
  };
  insert(batch);
  insert(batch);  // a replay: stored once, counted once
  insert({spent("a1", kNov30 + 10 * kMin, "g1", "a", 1000),
          spent("a3", kNov30 + 14 * kMin + 59'999, "g1", "a", 4)});

  using Totals = std::map<std::pair<std::string, std::string>, std::int64_t>;
  auto totals = [](const Result<std::vector<SpendRow>>& rows) {
    Totals out;
    EXPECT_TRUE(rows) << rows.error().message();
    for (const SpendRow& r : rows ? *rows : std::vector<SpendRow>{}) {
      out[{r.key_group, r.key_id}] += r.cost_micros;
    }
    return out;
  };
  const Totals from_nov30 = totals(store_->spend_since(kNov30));
  EXPECT_EQ(from_nov30, (Totals{{{"g1", "a"}, 1034}, {{"g1", "b"}, 500}, {{"g2", "c"}, 2}}));
  // Every start: on a quarter hour, inside one (the ledger supplies the partial bucket), at a
  // record's own millisecond, just after it.
  for (std::int64_t from : {kNov30 - kDay, kNov30 - kMin, kNov30, kNov30 + 5 * kMin,
                            kNov30 + 10 * kMin, kNov30 + 10 * kMin + 1, kNov30 + 14 * kMin + 59'999,
                            kNov30 + 15 * kMin, kNov30 + 21 * kMin, kNov30 + kDay}) {
    EXPECT_EQ(totals(store_->spend_since(from)), totals(store_->Store::spend_since(from)))
        << "from " << from - kNov30 << " ms after Nov 30";
  }
  EXPECT_EQ(totals(store_->spend_since(kNov30 + 15 * kMin)),
            (Totals{{{"g1", "a"}, 30}, {{"g1", "b"}, 500}}));
}

TEST_P(StoreTest, DayAndHourBucketsAreUtc) {
  insert({record("late", kNov30 - 1), record("midnight", kNov30),
          record("one", kNov30 + 3'600'000 + 59'999)});
  UsageQuery q;
  q.group_by = {Dimension::kDay};
  auto rows = query(q);
  ASSERT_EQ(rows.size(), 2u);
  // Equal cost per request, so the busier day first.
  EXPECT_EQ(rows[0].group[0], "2026-11-30");
  EXPECT_EQ(rows[0].requests, 2u);
  EXPECT_EQ(rows[1].group[0], "2026-11-29");
  q.group_by = {Dimension::kHour};
  rows = query(q);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].group[0], "2026-11-29T23");
  EXPECT_EQ(rows[1].group[0], "2026-11-30T00");
  EXPECT_EQ(rows[2].group[0], "2026-11-30T01");
}

TEST_P(StoreTest, RowsComeMostExpensiveFirstAndStopAtTheLimit) {
  std::vector<UsageRecord> records;
  for (int i = 0; i < 5; ++i) {
    UsageRecord r = record(fmt::format("m{}", i), kNov30);
    r.model = "model-" + std::to_string(i);
    r.cost_micros = (i * 7) % 5 * 100;
    records.push_back(r);
  }
  insert(records);
  UsageQuery q;
  q.group_by = {Dimension::kModel};
  q.limit = 3;
  const auto rows = query(q);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(describe(rows), describe(expected_rows(records, q)));
  EXPECT_GE(rows[0].cost_micros, rows[1].cost_micros);
  EXPECT_GE(rows[1].cost_micros, rows[2].cost_micros);
}

// Tenancy tables (store/tenancy.h).

KeyGroup sample_group(std::string name) {
  KeyGroup g;
  g.name = std::move(name);
  g.description = "research team \"R&D\" é";
  Budget b;
  b.amount_micros = 5'000'000'000'000LL;
  b.period = BudgetPeriod::kCumulative;
  b.mode = BudgetMode::kAdvisory;
  b.time_zone = "Europe/Paris";
  b.starts_at_ms = kNov30;
  g.budget = b;
  g.quota = RateQuota{600, 2'000'000, 20};
  g.allowed_aliases = {"fast", "smart \"quoted\""};
  g.disabled = true;
  g.created_at_ms = kNov30 + 1;
  g.updated_at_ms = kNov30 + 2;
  return g;
}

ApiKey sample_key(std::string id, std::string name, std::string group) {
  ApiKey k;
  k.id = std::move(id);
  k.name = std::move(name);
  k.group = std::move(group);
  k.prefix = "sk-slc-3f9a";
  k.sha256_hex = std::string(64, 'a') + k.id;
  k.status = KeyStatus::kDisabled;
  k.expires_at_ms = kNov30 + kDay;
  k.allowed_aliases = {"fast"};
  k.allocation_micros = 1'000'000;
  k.quota = RateQuota{60, 100'000, 0};
  k.created_at_ms = kNov30 + 3;
  k.updated_at_ms = kNov30 + 4;
  return k;
}

AuditEntry audit_entry(std::string action, std::string type, std::string id, std::int64_t at) {
  AuditEntry a;
  a.at_ms = at;
  a.actor = "admin";
  a.action = std::move(action);
  a.object_type = std::move(type);
  a.object_id = std::move(id);
  a.after_json = R"({"name":"x"})";
  a.request_id = "req-" + a.object_id;
  return a;
}

TEST_P(StoreTest, TenancyStartsEmptyAtRevisionZero) {
  auto state = store_->load_tenancy();
  ASSERT_TRUE(state) << state.error().message();
  EXPECT_EQ(state->revision, 0u);
  EXPECT_TRUE(state->groups.empty());
  EXPECT_TRUE(state->keys.empty());
  auto revision = store_->tenancy_revision();
  ASSERT_TRUE(revision) << revision.error().message();
  EXPECT_EQ(*revision, 0u);
}

TEST_P(StoreTest, EveryTenancyFieldRoundTrips) {
  KeyGroup full = sample_group("research");
  KeyGroup bare;  // no budget, no lists, every default
  bare.name = "bare";
  ApiKey key = sample_key("key_00000000000000a1", "indexer", "research");
  ApiKey plain;  // no expiry, no allocation
  plain.id = "key_00000000000000a2";
  plain.name = "plain";
  plain.group = "bare";
  plain.sha256_hex = std::string(64, 'b');
  TenancyCommit c;
  c.put_groups = {full, bare};
  c.put_keys = {key, plain};
  auto revision = store_->commit_tenancy(c);
  ASSERT_TRUE(revision) << revision.error().message();
  EXPECT_EQ(*revision, 1u);

  auto state = store_->load_tenancy();
  ASSERT_TRUE(state) << state.error().message();
  EXPECT_EQ(state->revision, 1u);
  ASSERT_EQ(state->groups.size(), 2u);
  EXPECT_EQ(state->groups[0], bare) << "groups come sorted by name";
  EXPECT_EQ(state->groups[1], full);
  EXPECT_FALSE(state->groups[0].budget.has_value());
  ASSERT_EQ(state->keys.size(), 2u);
  EXPECT_EQ(state->keys[0], key);
  EXPECT_EQ(state->keys[1], plain);
  EXPECT_FALSE(state->keys[1].expires_at_ms.has_value());
  EXPECT_FALSE(state->keys[1].allocation_micros.has_value());
}

TEST_P(StoreTest, ATenancyPutReplacesByNameAndId) {
  TenancyCommit c;
  c.put_groups = {sample_group("research")};
  c.put_keys = {sample_key("key_1", "indexer", "research")};
  ASSERT_TRUE(store_->commit_tenancy(c));

  TenancyCommit update;
  update.expected_revision = 1;
  KeyGroup g = sample_group("research");
  g.budget.reset();
  g.allowed_aliases.clear();
  ApiKey k = sample_key("key_1", "indexer-renamed", "research");
  k.status = KeyStatus::kRevoked;
  k.allocation_micros.reset();
  update.put_groups = {g};
  update.put_keys = {k};
  auto revision = store_->commit_tenancy(update);
  ASSERT_TRUE(revision) << revision.error().message();
  EXPECT_EQ(*revision, 2u);
  auto state = store_->load_tenancy();
  ASSERT_TRUE(state);
  ASSERT_EQ(state->groups.size(), 1u);
  EXPECT_EQ(state->groups[0], g);
  ASSERT_EQ(state->keys.size(), 1u);
  EXPECT_EQ(state->keys[0], k);
}

TEST_P(StoreTest, AStaleRevisionConflictsAndStoresNothing) {
  TenancyCommit first;
  first.put_groups = {sample_group("research")};
  ASSERT_TRUE(store_->commit_tenancy(first));

  TenancyCommit stale;
  stale.expected_revision = 0;
  stale.put_groups = {sample_group("other")};
  stale.put_keys = {sample_key("key_9", "late", "other")};
  stale.audit = {audit_entry("group.create", "group", "other", kNov30)};
  stale.idempotency = IdempotentReply{"idem-1", "sha", 201, "{}", kNov30};
  auto refused = store_->commit_tenancy(stale);
  ASSERT_FALSE(refused);
  EXPECT_TRUE(is_tenancy_conflict(refused.error())) << refused.error().message();
  EXPECT_EQ(refused.error().kind(), ErrorKind::kUnavailable);

  auto state = store_->load_tenancy();
  ASSERT_TRUE(state);
  EXPECT_EQ(state->revision, 1u);
  ASSERT_EQ(state->groups.size(), 1u);
  EXPECT_EQ(state->groups[0].name, "research");
  EXPECT_TRUE(state->keys.empty());
  auto audit = store_->list_audit({});
  ASSERT_TRUE(audit);
  EXPECT_TRUE(audit->empty());
  auto idem = store_->find_idempotent("idem-1", kNov30);
  ASSERT_TRUE(idem);
  EXPECT_FALSE(idem->has_value());
}

TEST_P(StoreTest, AFailingTenancyCommitRollsBackEverything) {
  TenancyCommit c;
  c.put_groups = {sample_group("research")};
  ApiKey a = sample_key("key_a", "same-name", "research");
  ApiKey b = sample_key("key_b", "same-name", "research");  // names are unique
  c.put_keys = {a, b};
  c.audit = {audit_entry("key.create", "key", "key_a", kNov30)};
  auto refused = store_->commit_tenancy(c);
  ASSERT_FALSE(refused);
  EXPECT_FALSE(is_tenancy_conflict(refused.error()));
  auto state = store_->load_tenancy();
  ASSERT_TRUE(state);
  EXPECT_EQ(state->revision, 0u);
  EXPECT_TRUE(state->groups.empty());
  EXPECT_TRUE(state->keys.empty());
  auto audit = store_->list_audit({});
  ASSERT_TRUE(audit);
  EXPECT_TRUE(audit->empty());
}

TEST_P(StoreTest, AnIdempotentReplyIsStoredWithItsCommitAndTakenOnce) {
  TenancyCommit c;
  c.put_groups = {sample_group("research")};
  c.idempotency = IdempotentReply{"idem-7", std::string(64, 'c'), 201, R"({"name":"research"})", 0};
  ASSERT_TRUE(store_->commit_tenancy(c));
  auto found = store_->find_idempotent("idem-7", wall_ms());
  ASSERT_TRUE(found) << found.error().message();
  ASSERT_TRUE(found->has_value());
  EXPECT_EQ((*found)->key, "idem-7");
  EXPECT_EQ((*found)->request_sha256, std::string(64, 'c'));
  EXPECT_EQ((*found)->status, 201);
  EXPECT_EQ((*found)->body, R"({"name":"research"})");
  EXPECT_GT((*found)->created_at_ms, 0) << "the store stamps the time when none is given";

  TenancyCommit again;
  again.expected_revision = 1;
  again.put_groups = {sample_group("other")};
  again.idempotency = IdempotentReply{"idem-7", "different", 200, "{}", 0};
  auto refused = store_->commit_tenancy(again);
  ASSERT_FALSE(refused);
  EXPECT_TRUE(is_tenancy_conflict(refused.error()));
  auto state = store_->load_tenancy();
  ASSERT_TRUE(state);
  EXPECT_EQ(state->revision, 1u);
  EXPECT_EQ(state->groups.size(), 1u);
  auto missing = store_->find_idempotent("idem-8", wall_ms());
  ASSERT_TRUE(missing);
  EXPECT_FALSE(missing->has_value());
}

// Expiry is read-side (an expired answer is never replayed, purged or not) and the purge
// deletes it; the key is then free for a new change.
TEST_P(StoreTest, AnExpiredIdempotentReplyIsNeverReadAndIsPurged) {
  TenancyCommit c;
  c.put_groups = {sample_group("research")};
  c.idempotency = IdempotentReply{"idem-old", "sha", 201, "{}", kNov30};
  ASSERT_TRUE(store_->commit_tenancy(c));
  const std::int64_t expiry = kNov30 + kIdempotencyRetentionMs;
  auto fresh = store_->find_idempotent("idem-old", expiry);
  ASSERT_TRUE(fresh) << fresh.error().message();
  EXPECT_TRUE(fresh->has_value()) << "still within the retention";
  auto expired = store_->find_idempotent("idem-old", expiry + 1);
  ASSERT_TRUE(expired) << expired.error().message();
  EXPECT_FALSE(expired->has_value()) << "expired: not replayed, though not purged yet";

  ASSERT_TRUE(store_->purge_idempotent(expiry));
  EXPECT_TRUE(store_->find_idempotent("idem-old", kNov30)->has_value()) << "not expired yet";
  ASSERT_TRUE(store_->purge_idempotent(expiry + 1));
  EXPECT_FALSE(store_->find_idempotent("idem-old", kNov30)->has_value()) << "deleted";

  TenancyCommit again;
  again.expected_revision = 1;
  again.put_groups = {sample_group("other")};
  again.idempotency = IdempotentReply{"idem-new", "sha", 201, "{}", kNov30};
  ASSERT_TRUE(store_->commit_tenancy(again));
  TenancyCommit reuse;  // after the retention the same key is a new request
  reuse.expected_revision = 2;
  reuse.put_groups = {sample_group("third")};
  reuse.idempotency = IdempotentReply{"idem-new", "sha2", 200, "[]", expiry + 1};
  auto reused = store_->commit_tenancy(reuse);
  ASSERT_TRUE(reused) << reused.error().message();
  auto found = store_->find_idempotent("idem-new", expiry + 1);
  ASSERT_TRUE(found && found->has_value());
  EXPECT_EQ((*found)->body, "[]");
}

TEST_P(StoreTest, AuditComesNewestFirstAndFilters) {
  TenancyCommit c;
  c.put_groups = {sample_group("research")};
  c.audit = {audit_entry("group.create", "group", "research", kNov30),
             audit_entry("key.create", "key", "key_1", kNov30 + 10)};
  ASSERT_TRUE(store_->commit_tenancy(c));
  TenancyCommit c2;
  c2.expected_revision = 1;
  c2.audit = {audit_entry("key.update", "key", "key_1", kNov30 + 20)};
  c2.audit[0].before_json = R"({"status":"active"})";
  ASSERT_TRUE(store_->commit_tenancy(c2));

  auto all = store_->list_audit({});
  ASSERT_TRUE(all) << all.error().message();
  ASSERT_EQ(all->size(), 3u);
  EXPECT_EQ((*all)[0].action, "key.update");
  EXPECT_EQ((*all)[1].action, "key.create");
  EXPECT_EQ((*all)[2].action, "group.create");
  EXPECT_GT((*all)[0].id, (*all)[1].id);
  EXPECT_GT((*all)[1].id, (*all)[2].id);
  AuditEntry want = c2.audit[0];
  want.id = (*all)[0].id;
  EXPECT_EQ((*all)[0], want) << "every field round trips";

  AuditQuery by_object;
  by_object.object_type = "key";
  by_object.object_id = "key_1";
  auto key_rows = store_->list_audit(by_object);
  ASSERT_TRUE(key_rows);
  ASSERT_EQ(key_rows->size(), 2u);
  EXPECT_EQ((*key_rows)[0].action, "key.update");

  AuditQuery by_time;
  by_time.from_ms = kNov30 + 10;
  by_time.to_ms = kNov30 + 20;
  auto timed = store_->list_audit(by_time);
  ASSERT_TRUE(timed);
  ASSERT_EQ(timed->size(), 1u) << "from is included, to excluded";
  EXPECT_EQ((*timed)[0].action, "key.create");

  AuditQuery limited;
  limited.limit = 1;
  auto one = store_->list_audit(limited);
  ASSERT_TRUE(one);
  ASSERT_EQ(one->size(), 1u);
  EXPECT_EQ((*one)[0].action, "key.update");
}

TEST_P(StoreTest, DeletingAGroupNeedsItsKeysRevoked) {
  TenancyCommit c;
  c.put_groups = {sample_group("research")};
  ApiKey k = sample_key("key_1", "indexer", "research");
  c.put_keys = {k};
  ASSERT_TRUE(store_->commit_tenancy(c));

  TenancyCommit del;
  del.expected_revision = 1;
  del.delete_groups = {"research"};
  auto refused = store_->commit_tenancy(del);
  ASSERT_FALSE(refused);
  EXPECT_FALSE(is_tenancy_conflict(refused.error()));

  k.status = KeyStatus::kRevoked;
  del.put_keys = {k};
  auto deleted = store_->commit_tenancy(del);
  ASSERT_TRUE(deleted) << deleted.error().message();
  EXPECT_EQ(*deleted, 2u);
  auto state = store_->load_tenancy();
  ASSERT_TRUE(state);
  EXPECT_TRUE(state->groups.empty());
  ASSERT_EQ(state->keys.size(), 1u) << "a revoked key stays for the record";
  auto revision = store_->tenancy_revision();
  ASSERT_TRUE(revision);
  EXPECT_EQ(*revision, 2u);
}

Result<std::unique_ptr<Store>> open_sqlite(const std::string& test, bool fresh) {
  const auto dir = sqlite_dir();
  std::filesystem::create_directories(dir);
  const auto path = dir / (test + ".db");
  for (const char* suffix : {"", "-wal", "-shm"}) {
    if (fresh) {
      std::filesystem::remove(path.string() + suffix);
    }
  }
  auto store = SqliteStore::open(path.string());
  if (!store) {
    return store.error();
  }
  return std::unique_ptr<Store>(std::move(*store));
}

INSTANTIATE_TEST_SUITE_P(Sqlite, StoreTest,
                         ::testing::Values(Backend{
                             "sqlite",
                             [](const std::string& test) { return open_sqlite(test, true); },
                             [](const std::string& test) { return open_sqlite(test, false); }}),
                         [](const auto& info) { return info.param.name; });

// A reader (`sluice usage`) given a path with no database gets kNotFound, and no file: a
// mistyped path never becomes an empty new database.
TEST(OpenStore, AReaderNeverCreatesTheDatabaseFile) {
  const auto dir = sqlite_dir();
  std::filesystem::create_directories(dir);
  config::StoreSettings settings;
  settings.kind = config::StoreSettings::Kind::kSqlite;
  settings.sqlite_path = (dir / "missing.db").string();
  auto opened = open_store(settings, OpenMode::kExisting);
  ASSERT_FALSE(opened);
  EXPECT_EQ(opened.error().kind(), ErrorKind::kNotFound);
  EXPECT_EQ(opened.error().message(), settings.sqlite_path + ": no such database file");
  EXPECT_FALSE(std::filesystem::exists(settings.sqlite_path));
  auto created = open_store(settings);
  ASSERT_TRUE(created) << created.error().message();
  ASSERT_TRUE((*created)->migrate());
  auto existing = open_store(settings, OpenMode::kExisting);
  ASSERT_TRUE(existing) << existing.error().message();
  EXPECT_EQ(*(*existing)->count_usage(), 0u);
}

TEST(SqliteStoreFile, ANewDatabaseIsReadableByItsOwnerOnly) {
  const auto dir = sqlite_dir();
  std::filesystem::create_directories(dir);
  const auto path = dir / "mode.db";
  std::filesystem::remove(path);
  auto store = SqliteStore::open(path.string());
  ASSERT_TRUE(store) << store.error().message();
  ASSERT_TRUE((*store)->migrate());
  const auto perms = std::filesystem::status(path).permissions();
  EXPECT_EQ(perms & (std::filesystem::perms::group_all | std::filesystem::perms::others_all),
            std::filesystem::perms::none);
}

// A usage_records row as versions before migration 005 wrote it, as literal SQL.
std::string legacy_row_sql(const UsageRecord& r) {
  std::string columns;
  std::string values;
  auto quote = [](const std::string& text) {
    std::string out = "'";
    for (char c : text) {
      out += c;
      if (c == '\'') {
        out += c;
      }
    }
    return out + "'";
  };
  visit_usage_fields(r, [&](std::string_view name, const auto& v) {
    using T = std::decay_t<decltype(v)>;
    if (name == "key_id" || name.starts_with("saved_") || name == "guardrails") {
      return;  // fields added after the segments (sqlite/006, 007; guardrails)
    }
    columns += (columns.empty() ? "" : ", ") + std::string(name);
    values += values.empty() ? "" : ", ";
    if constexpr (std::is_same_v<T, std::string>) {
      values += quote(v);
    } else if constexpr (std::is_same_v<T, std::vector<AttemptRecord>>) {
      values += quote(encode_attempts(v));
    } else if constexpr (std::is_same_v<T, bool>) {
      values += v ? "1" : "0";
    } else {
      values += std::to_string(v);
    }
  });
  return "INSERT INTO usage_records (" + columns + ") VALUES (" + values + ");";
}

// The first column of the first row of `sql`, read with a connection of its own.
std::string sqlite_text(const std::filesystem::path& path, const std::string& sql) {
  sqlite3* db = nullptr;
  std::string out = "(error)";
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
    sqlite3_stmt* stmt = nullptr;
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr) == SQLITE_OK &&
        sqlite3_step(stmt) == SQLITE_ROW) {
      const auto* text = sqlite3_column_text(stmt, 0);
      out = text != nullptr ? reinterpret_cast<const char*>(text) : "(null)";
    }
    sqlite3_finalize(stmt);
  }
  sqlite3_close(db);
  return out;
}

std::unique_ptr<SqliteStore> fresh_sqlite(const std::string& name) {
  const auto dir = sqlite_dir();
  std::filesystem::create_directories(dir);
  const auto path = dir / name;
  for (const char* suffix : {"", "-wal", "-shm"}) {
    std::filesystem::remove(path.string() + suffix);
  }
  auto store = SqliteStore::open(path.string());
  EXPECT_TRUE(store) << store.error().message();
  return store ? std::move(*store) : nullptr;
}

// Spend rows from before budgets counted by key id (sqlite/006) go to the key that has their
// name at the upgrade: a store key of their group, else the config-file key of that name.
TEST(SqliteSpend, SpendFromBeforeKeyIdsGoesToTheKeyThatHasTheName) {
  auto store = fresh_sqlite("before-006.db");
  ASSERT_TRUE(store);
  ASSERT_TRUE(store->migrate_to_for_test(5));
  ASSERT_TRUE(store->execute_for_test(
      "INSERT INTO api_keys VALUES ('key_1', 'indexer', 'research', 'sk-slc-x', 'h1', 'active', "
      "NULL, '[]', NULL, 0, 0, 0, 0);"
      "INSERT INTO usage_spend VALUES (0, 'research', 'indexer', 100, 1), "
      "(900000, 'research', 'indexer', 20, 2), (0, 'research', 'dev', 7, 1), "
      "(0, 'other', 'indexer', 3, 1), (0, '', '', 5, 1);"));
  ASSERT_TRUE(store->migrate());
  auto rows = store->spend_since(0);
  ASSERT_TRUE(rows) << rows.error().message();
  std::map<std::pair<std::string, std::string>, std::int64_t> spend;
  for (const SpendRow& row : *rows) {
    spend[{row.key_group, row.key_id}] += row.cost_micros;
  }
  EXPECT_EQ(spend, (std::map<std::pair<std::string, std::string>, std::int64_t>{
                       {{"research", "key_1"}, 120},
                       {{"research", "config:dev"}, 7},
                       {{"other", "config:indexer"}, 3},
                       {{"", ""}, 5}}));
}

// A database written before migrations 004 (the rollup) and 005 (segments): after them every
// record is reported, found, exported and counted once, and a replay of any of them (a spool
// written before the upgrade) stores nothing.
TEST(SqliteSegments, ADatabaseWrittenBeforeTheSegmentsKeepsEveryRecord) {
  auto store = fresh_sqlite("before-005.db");
  ASSERT_TRUE(store);
  ASSERT_TRUE(store->migrate_to_for_test(3));
  auto records = sample_records();
  records[7].record_id = "9f2c-0-007";  // ids of every shape move into runs
  records[8].record_id = "no-digits";
  records[9].record_id = "9f2c-0-7";
  records[11].request_id = "it's quoted";
  std::string rows = "BEGIN;";
  for (const UsageRecord& r : records) {
    rows += legacy_row_sql(r);
  }
  ASSERT_TRUE(store->execute_for_test(rows + "COMMIT;"));
  ASSERT_TRUE(store->migrate());
  ASSERT_FALSE(store->execute_for_test("SELECT 1 FROM usage_records")) << "the table is gone";
  EXPECT_EQ(*store->count_usage(), records.size());
  for (const std::vector<Dimension>& group_by :
       {std::vector<Dimension>{}, {Dimension::kKey, Dimension::kOutcome, Dimension::kDay}}) {
    for (const auto& [from, to] : {std::pair<std::int64_t, std::int64_t>{0, INT64_MAX},
                                   {records[5].started_at_ms + 17, records[50].started_at_ms}}) {
      UsageQuery q;
      q.group_by = group_by;
      q.from_ms = from;
      q.to_ms = to;
      auto rows = store->query_usage(q);
      ASSERT_TRUE(rows) << rows.error().message();
      EXPECT_EQ(describe(*rows), describe(expected_rows(records, q)));
    }
  }
  auto found = store->find_usage("it's quoted");
  ASSERT_TRUE(found && found->has_value());
  EXPECT_EQ((*found)->record_id, records[11].record_id);
  ASSERT_TRUE(store->insert_usage(records));
  EXPECT_EQ(*store->count_usage(), records.size()) << "a replay after the upgrade adds nothing";
  UsageQuery total;
  EXPECT_EQ(describe(*store->query_usage(total)), describe(expected_rows(records, total)));
}

// Record ids are remembered as runs of sequences per prefix: replays in any order and
// overlap, ids of every shape, and one run per writer while its sequences follow on.
TEST(SqliteSegments, ReplaysAreSkippedWhateverTheIdsLookLike) {
  auto store = fresh_sqlite("runs.db");
  ASSERT_TRUE(store);
  ASSERT_TRUE(store->migrate());
  std::set<std::string> stored;
  std::uint64_t expected = 0;
  auto insert = [&](const std::vector<std::string>& ids) {
    std::vector<UsageRecord> batch;
    for (const std::string& id : ids) {
      batch.push_back(record(id, kNov30));
      if (stored.insert(id).second) {
        ++expected;
      }
    }
    auto r = store->insert_usage(batch);
    ASSERT_TRUE(r) << r.error().message();
    EXPECT_EQ(*store->count_usage(), expected);
  };
  insert({"w-1", "w-2", "w-3"});
  insert({"w-4", "w-5"});
  insert({"w-3", "w-4", "w-6"});                  // overlaps the end, continues it
  insert({"w-10", "w-9", "w-12"});                // a gap, out of order
  insert({"w-7", "w-8", "w-11"});                 // fills the gaps: one run again
  insert({"w-1", "w-12", "w-6", "w-6"});          // all stored; one id twice in the batch
  insert({"w-05", "w-005", "w-0", "w-00", "w"});  // zeros and no digits are other ids
  insert({"w-05", "w-0", "w"});
  insert({"x-999999999999999999999", "x-99999999999999999999"});  // beyond int64
  insert({"x-999999999999999999999"});
  insert({"v-2", "v-1"});
  auto rows = store->query_usage(UsageQuery{});
  ASSERT_TRUE(rows);
  EXPECT_EQ((*rows)[0].requests, expected);
  // w-0..w-12 is one run: the runs table does not grow with every batch.
  EXPECT_EQ(sqlite_text(sqlite_dir() / "runs.db",
                        "SELECT group_concat(first_sequence || '..' || last_sequence) FROM "
                        "usage_record_runs WHERE prefix = 'w-'"),
            "0..12");
}

// SLUICE_TEST_POSTGRES_URL, or kNotFound so the fixture skips (or fails when required).
Result<std::string> postgres_url() {
  const char* url = std::getenv("SLUICE_TEST_POSTGRES_URL");
  if (url == nullptr || *url == '\0') {
    return Error(ErrorKind::kNotFound,
                 "SLUICE_TEST_POSTGRES_URL is not set (scripts/test-services.sh starts one)");
  }
  return std::string(url);
}

bool postgres_required() {
  const char* require = std::getenv("SLUICE_REQUIRE_POSTGRES");
  return require != nullptr && std::string_view(require) == "1";
}

// The schema (and application_name) of a test: lower case, within PostgreSQL's 63 bytes.
std::string schema_of(const std::string& test) {
  std::string schema = "t_" + test.substr(0, 55);
  for (char& c : schema) {
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return schema;
}

// A store whose connections have the schema named after the test first on their search path;
// application_name names it too, so a test can end its own connection.
Result<std::unique_ptr<PostgresStore>> postgres_in_schema(const std::string& url,
                                                          const std::string& test,
                                                          PostgresStore::Options options = {}) {
  const std::string schema = schema_of(test);
  const std::string parameters =
      "options=-csearch_path%3D" + schema + "&application_name=" + schema;
  return PostgresStore::open(url + (url.find('?') == std::string::npos ? "?" : "&") + parameters,
                             options);
}

// The same, in a fresh schema.
Result<std::unique_ptr<PostgresStore>> fresh_postgres(const std::string& test,
                                                      PostgresStore::Options options = {}) {
  auto url = postgres_url();
  if (!url) {
    return url.error();
  }
  const std::string schema = schema_of(test);
  auto admin = PostgresStore::open(*url);
  if (!admin) {
    return admin.error();
  }
  if (auto r = (*admin)->execute_for_test("DROP SCHEMA IF EXISTS " + schema +
                                          " CASCADE; CREATE SCHEMA " + schema);
      !r) {
    return r.error();
  }
  return postgres_in_schema(*url, test, options);
}

INSTANTIATE_TEST_SUITE_P(Postgres, StoreTest,
                         ::testing::Values(Backend{
                             "postgres",
                             [](const std::string& test) -> Result<std::unique_ptr<Store>> {
                               auto store = fresh_postgres(test);
                               if (!store) {
                                 return store.error();
                               }
                               return std::unique_ptr<Store>(std::move(*store));
                             },
                             [](const std::string& test) -> Result<std::unique_ptr<Store>> {
                               auto url = postgres_url();
                               if (!url) {
                                 return url.error();
                               }
                               auto store = postgres_in_schema(*url, test);
                               if (!store) {
                                 return store.error();
                               }
                               return std::unique_ptr<Store>(std::move(*store));
                             }}),
                         [](const auto& info) { return info.param.name; });

// PostgreSQL-only behaviour: reconnection and bounded waits, against the test server.
class PostgresStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!postgres_url()) {
      if (postgres_required()) {
        FAIL() << "SLUICE_TEST_POSTGRES_URL is not set and SLUICE_REQUIRE_POSTGRES=1";
      }
      GTEST_SKIP() << "SLUICE_TEST_POSTGRES_URL is not set";
    }
  }
};

TEST_F(PostgresStoreTest, AConnectionTheServerEndedIsReplacedOnTheNextCall) {
  auto store = fresh_postgres(test_slug());
  ASSERT_TRUE(store) << store.error().message();
  ASSERT_TRUE((*store)->migrate());
  ASSERT_TRUE((*store)->insert_usage(std::vector<UsageRecord>{record("a", kNov30)}));

  // End the store's connection from another one, as a server restart or a network cut would;
  // the store only finds out on its next call.
  auto admin = PostgresStore::open(*postgres_url());
  ASSERT_TRUE(admin);
  const std::string app = schema_of(test_slug());
  auto ended = (*admin)->execute_for_test(
      "DO $$ BEGIN IF (SELECT count(*) FROM pg_stat_activity WHERE application_name = '" + app +
      "') = 0 THEN RAISE EXCEPTION 'no connection to end'; END IF; END $$; "
      "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = '" +
      app + "'");
  ASSERT_TRUE(ended) << ended.error().message();

  auto inserted = (*store)->insert_usage(std::vector<UsageRecord>{record("b", kNov30)});
  ASSERT_TRUE(inserted) << "reconnects and retries once: " << inserted.error().message();
  auto n = (*store)->count_usage();
  ASSERT_TRUE(n) << n.error().message();
  EXPECT_EQ(*n, 2u);
  EXPECT_TRUE((*store)->ping());
}

TEST_F(PostgresStoreTest, AStatementOverTheTimeoutFailsWithinIt) {
  PostgresStore::Options options;
  options.statement_timeout = std::chrono::milliseconds(300);
  auto store = fresh_postgres(test_slug(), options);
  ASSERT_TRUE(store) << store.error().message();
  ASSERT_TRUE((*store)->ping());
  const auto start = std::chrono::steady_clock::now();
  auto r = (*store)->execute_for_test("SELECT pg_sleep(30)");
  const auto took = std::chrono::steady_clock::now() - start;
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message().find("57014"), std::string::npos) << r.error().message();
  EXPECT_LT(took, std::chrono::seconds(3));
  EXPECT_TRUE((*store)->ping()) << "the connection survives a cancelled statement";
}

// A real outage, on a private server: stopping the shared one would fail the cases that run
// beside this one (ctest -j).
TEST_F(PostgresStoreTest, AStoppedServerFailsFastAndIsReconnectedToWhenItIsBack) {
  char dir_template[] = "/tmp/sluice-store-outage.XXXXXX";
  ASSERT_NE(::mkdtemp(dir_template), nullptr);
  const std::string dir = dir_template;
  const std::string services = std::string(SLUICE_SOURCE_DIR) + "/scripts/test-services.sh";
  auto services_do = [&](const std::string& verb) {
    return std::system((services + " " + verb + " " + dir + " >/dev/null").c_str());
  };
  ASSERT_EQ(services_do("start"), 0);
  struct Stop {
    std::function<int(const std::string&)> run;
    ~Stop() { run("stop"); }
  } stop{services_do};
  std::ifstream env(dir + "/env");
  std::string line, url;
  const std::string prefix = "export SLUICE_TEST_POSTGRES_URL='";
  while (std::getline(env, line)) {
    if (line.starts_with(prefix)) {
      url = line.substr(prefix.size(), line.size() - prefix.size() - 1);
    }
  }
  ASSERT_FALSE(url.empty());

  PostgresStore::Options options;
  options.connect_timeout = std::chrono::seconds(2);
  auto store = PostgresStore::open(url, options);
  ASSERT_TRUE(store);
  ASSERT_TRUE((*store)->migrate());
  ASSERT_TRUE((*store)->insert_usage(std::vector<UsageRecord>{record("a", kNov30)}));

  ASSERT_EQ(services_do("pg-stop"), 0);
  const auto start = std::chrono::steady_clock::now();
  auto down = (*store)->insert_usage(std::vector<UsageRecord>{record("b", kNov30)});
  ASSERT_FALSE(down);
  EXPECT_EQ(down.error().kind(), ErrorKind::kUnavailable) << down.error().message();
  EXPECT_FALSE((*store)->ping());
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(3));

  ASSERT_EQ(services_do("pg-start"), 0);  // returns once the server accepts connections
  auto ping = (*store)->ping();
  ASSERT_TRUE(ping) << ping.error().message();
  auto back = (*store)->insert_usage(std::vector<UsageRecord>{record("b", kNov30)});
  ASSERT_TRUE(back) << back.error().message();
  auto n = (*store)->count_usage();
  ASSERT_TRUE(n);
  EXPECT_EQ(*n, 2u) << "data kept across the restart, the failed batch written once";
}

// A loopback port; `listening` keeps a socket that completes TCP handshakes but never answers.
struct DeadPort {
  int fd = -1;
  int port = 0;
  explicit DeadPort(bool listening) {
    fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
    socklen_t len = sizeof addr;
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
    port = ntohs(addr.sin_port);
    if (listening) {
      ::listen(fd, 8);
    } else {
      ::close(fd);  // nothing listens there now
      fd = -1;
    }
  }
  ~DeadPort() {
    if (fd >= 0) {
      ::close(fd);
    }
  }
};

// These need no server: the address is dead.
TEST(PostgresDeadAddress, ARefusedConnectionFailsAtOnceAndNeverShowsThePassword) {
  DeadPort dead(false);
  auto store = PostgresStore::open(
      "postgresql://sluice:s3cret-pw@127.0.0.1:" + std::to_string(dead.port) + "/x");
  ASSERT_TRUE(store);
  const auto start = std::chrono::steady_clock::now();
  auto r = (*store)->ping();
  ASSERT_FALSE(r);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
  EXPECT_EQ(r.error().kind(), ErrorKind::kUnavailable);
  EXPECT_EQ(r.error().message().find("s3cret-pw"), std::string::npos) << r.error().message();
  auto insert = (*store)->insert_usage(std::vector<UsageRecord>{record("a", kNov30)});
  ASSERT_FALSE(insert);
  EXPECT_EQ(insert.error().kind(), ErrorKind::kUnavailable);
}

TEST(PostgresDeadAddress, AServerThatNeverAnswersFailsWithinTheConnectTimeout) {
  DeadPort hung(true);
  PostgresStore::Options options;
  options.connect_timeout = std::chrono::seconds(2);
  auto store = PostgresStore::open(
      "postgresql://sluice@127.0.0.1:" + std::to_string(hung.port) + "/x", options);
  ASSERT_TRUE(store);
  const auto start = std::chrono::steady_clock::now();
  auto r = (*store)->ping();
  const auto took = std::chrono::steady_clock::now() - start;
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().kind(), ErrorKind::kUnavailable);
  EXPECT_GE(took, std::chrono::milliseconds(1500)) << "it waited for the server";
  EXPECT_LT(took, std::chrono::seconds(5)) << r.error().message();
}

TEST(PostgresUrl, AnUnparsableUrlIsRefusedWithoutEchoingIt) {
  auto store = PostgresStore::open("postgresql://user:hunter2@host:1/db?bogus_parameter=1");
  ASSERT_FALSE(store);
  EXPECT_EQ(store.error().message().find("hunter2"), std::string::npos);
}

}  // namespace
}  // namespace sluice::store
