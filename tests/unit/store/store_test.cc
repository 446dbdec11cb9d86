// One suite, run against every backend: SQLite (a temp file) and PostgreSQL at
// SLUICE_TEST_POSTGRES_URL (scripts/test-services.sh; each test in a schema of its own).
// Without the variable the PostgreSQL cases skip, or fail when SLUICE_REQUIRE_POSTGRES=1
// (scripts/run-tests.sh), so `make test` cannot pass without having run them.

#include "store/store.h"

#include <cctype>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <string>

#include <gtest/gtest.h>

#include "config/config.h"
#include "store/sqlite_store.h"

namespace sluice::store {
namespace {

constexpr std::int64_t kDay = 86'400'000;
// 2026-11-30T00:00:00Z
constexpr std::int64_t kNov30 = 1'796'083'200'000;

UsageRecord record(std::string id, std::int64_t started_at_ms) {
  UsageRecord r;
  r.record_id = id;
  r.request_id = "req-" + id;
  r.started_at_ms = started_at_ms;
  r.ended_at_ms = started_at_ms + 1500;
  r.key_name = "team-a";
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

// Opens a fresh, empty store of one backend.
struct Backend {
  std::string name;
  std::function<Result<std::unique_ptr<Store>>(const std::string& test)> open;
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
  EXPECT_FALSE(r);
  EXPECT_EQ(count(), 0u) << "the good records before the bad one were rolled back";

  UsageRecord huge = record("c", kNov30);
  huge.input_tokens = std::uint64_t{1} << 63;  // above BIGINT
  const std::vector<UsageRecord> batch2 = {record("d", kNov30), huge};
  EXPECT_FALSE(store_->insert_usage(batch2));
  EXPECT_EQ(count(), 0u);
  insert({record("a", kNov30)});
  EXPECT_EQ(count(), 1u) << "the store is usable after a failed batch";
}

TEST_P(StoreTest, EveryFieldRoundTrips) {
  UsageRecord r = record("rt-1", kNov30 + 123);
  r.key_group = "research";
  r.tenant = "acme";
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

INSTANTIATE_TEST_SUITE_P(Sqlite, StoreTest,
                         ::testing::Values(Backend{
                             "sqlite",
                             [](const std::string& test) -> Result<std::unique_ptr<Store>> {
                               const auto dir = std::filesystem::temp_directory_path() /
                                                ("sluice-store-test-" + std::to_string(::getpid()));
                               std::filesystem::create_directories(dir);
                               const auto path = dir / (test + ".db");
                               for (const char* suffix : {"", "-wal", "-shm"}) {
                                 std::filesystem::remove(path.string() + suffix);
                               }
                               auto store = SqliteStore::open(path.string());
                               if (!store) {
                                 return store.error();
                               }
                               return std::unique_ptr<Store>(std::move(*store));
                             }}),
                         [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace sluice::store
