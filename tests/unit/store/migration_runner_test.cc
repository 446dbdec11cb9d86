// The migration runner against a recording session: what it asks a store to do, in which order,
// and what it reports. store_test.cc runs it on SQLite and PostgreSQL.

#include "store/migration_runner.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace sluice::store {
namespace {

// Keeps schema_migrations as a list and every call as a line.
class RecordingSession final : public MigrationSession {
 public:
  std::vector<std::int64_t> recorded;
  std::vector<std::string> calls;
  std::string fail_on;  // a statement that fails (kInternal, "boom")
  int fail_data_step = 0;

  Dialect dialect() const override { return Dialect::kPostgres; }
  Result<void> begin() override {
    calls.push_back("begin");
    return {};
  }
  Result<void> commit() override {
    calls.push_back("commit");
    return {};
  }
  void rollback() override { calls.push_back("rollback"); }
  Result<void> execute(std::string_view sql) override {
    calls.emplace_back(sql);
    if (!fail_on.empty() && sql == fail_on) {
      return Error(ErrorKind::kInternal, "boom");
    }
    constexpr std::string_view kInsert = "INSERT INTO schema_migrations";
    if (sql.starts_with(kInsert)) {
      const auto values = sql.find("VALUES (") + 8;
      recorded.push_back(std::stoll(std::string(sql.substr(values))));
    }
    return {};
  }
  Result<std::vector<std::int64_t>> query_integers(std::string_view sql) override {
    calls.emplace_back(sql);
    return recorded;
  }
  Result<void> data_step(const Migration& m) override {
    if (m.version == fail_data_step) {
      return Error(ErrorKind::kUnavailable, "disk full");
    }
    return {};
  }
};

constexpr Migration kList[] = {
    {1, "first", "CREATE TABLE a (x INTEGER)"},
    {2, "second", "CREATE TABLE b (x INTEGER)"},
    {3, "it's", "CREATE TABLE c (x INTEGER)"},
};

TEST(MigrationRunner, AppliesThePendingOnesInOrderInOneTransactionAndRecordsEach) {
  RecordingSession s;
  s.recorded = {2};
  ASSERT_TRUE(run_migrations(s, kList, 1234));
  EXPECT_EQ(s.calls,
            (std::vector<std::string>{
                "begin",
                "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name "
                "TEXT NOT NULL, applied_at_ms BIGINT NOT NULL)",
                "SELECT version FROM schema_migrations", "CREATE TABLE a (x INTEGER)",
                "INSERT INTO schema_migrations (version, name, applied_at_ms) VALUES (1, 'first', "
                "1234)",
                "CREATE TABLE c (x INTEGER)",
                "INSERT INTO schema_migrations (version, name, applied_at_ms) VALUES (3, 'it''s', "
                "1234)",
                "commit"}));
  EXPECT_EQ(s.recorded, (std::vector<std::int64_t>{2, 1, 3}));
}

TEST(MigrationRunner, NothingPendingStillCommitsNothingButTheTable) {
  RecordingSession s;
  s.recorded = {1, 2, 3};
  ASSERT_TRUE(run_migrations(s, kList, 1));
  EXPECT_EQ(s.calls.size(), 4u);
  EXPECT_EQ(s.calls.back(), "commit");
}

TEST(MigrationRunner, StopsAfterTheVersionAskedFor) {
  RecordingSession s;
  ASSERT_TRUE(run_migrations(s, kList, 1, /*up_to=*/2));
  EXPECT_EQ(s.recorded, (std::vector<std::int64_t>{1, 2}));
}

TEST(MigrationRunner, AFailingMigrationIsNamedAndRollsEverythingBack) {
  RecordingSession s;
  s.fail_on = "CREATE TABLE b (x INTEGER)";
  auto r = run_migrations(s, kList, 1);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().kind(), ErrorKind::kInternal);
  EXPECT_EQ(r.error().message(), "migration 002_second: boom");
  EXPECT_EQ(s.calls.back(), "rollback");
  EXPECT_EQ(std::count(s.calls.begin(), s.calls.end(), "commit"), 0);
  EXPECT_EQ(std::count(s.calls.begin(), s.calls.end(), "CREATE TABLE c (x INTEGER)"), 0);
}

TEST(MigrationRunner, AFailingDataStepIsNamedWithItsKind) {
  RecordingSession s;
  s.fail_data_step = 3;
  auto r = run_migrations(s, kList, 1);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().kind(), ErrorKind::kUnavailable);
  EXPECT_EQ(r.error().message(), "migration 003_it's: disk full");
  EXPECT_EQ(s.calls.back(), "rollback");
}

TEST(MigrationRunner, AFailureToRecordRollsBack) {
  RecordingSession s;
  s.fail_on = "INSERT INTO schema_migrations (version, name, applied_at_ms) VALUES (1, 'first', 1)";
  auto r = run_migrations(s, kList, 1);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message(), "boom");
  EXPECT_EQ(s.calls.back(), "rollback");
}

}  // namespace
}  // namespace sluice::store
