#include "metering/usage_sink.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <unistd.h>

#include "metering/record_bytes.h"
#include "metering/record_json.h"
#include "metering/spool.h"

namespace sluice::metering {
namespace {

using namespace std::chrono_literals;

// The store the sink writes to, shared by every MemoryStore the opener hands out. Inserting an
// id already held is a no-op, as Store::insert_usage promises.
struct Ledger {
  std::map<std::string, store::UsageRecord> rows;
  int inserts = 0;          // successful insert_usage calls
  bool fail = false;        // every insert and ping fails
  bool fail_open = false;   // the opener fails
  int fail_insert_at = -1;  // the insert with this number (0-based, counting all) fails
  int calls = 0;
  std::chrono::milliseconds insert_takes{0};
  SimulatedClock* clock = nullptr;
  // A batch holding one of these record ids is refused for its data (kBadRequest), as a
  // store refuses a number out of its range.
  std::set<std::string> refuse;
};

class MemoryStore final : public store::Store {
 public:
  explicit MemoryStore(Ledger& ledger) : ledger_(ledger) {}
  std::string_view kind() const override { return "memory"; }
  Result<void> migrate() override { return ping(); }
  Result<void> ping() override {
    if (ledger_.fail) {
      return Error(ErrorKind::kInternal, "store is down");
    }
    return {};
  }
  Result<void> insert_usage(std::span<const store::UsageRecord> records) override {
    const int call = ledger_.calls++;
    if (ledger_.clock != nullptr) {
      ledger_.clock->advance(ledger_.insert_takes);
    }
    if (ledger_.fail || call == ledger_.fail_insert_at) {
      return Error(ErrorKind::kInternal, "database is locked");
    }
    for (const store::UsageRecord& r : records) {
      if (ledger_.refuse.contains(r.record_id)) {
        return Error(ErrorKind::kBadRequest, "record " + r.record_id + ": out of range");
      }
    }
    for (const store::UsageRecord& r : records) {
      ledger_.rows.emplace(r.record_id, r);
    }
    ++ledger_.inserts;
    return {};
  }
  Result<std::vector<store::UsageRow>> query_usage(const store::UsageQuery&) override {
    return std::vector<store::UsageRow>{};
  }
  Result<std::optional<store::UsageRecord>> find_usage(std::string_view) override {
    return std::optional<store::UsageRecord>{};
  }
  Result<std::uint64_t> count_usage() override { return std::uint64_t{ledger_.rows.size()}; }
  Result<void> export_usage(std::int64_t, std::int64_t,
                            const std::function<bool(const store::UsageRecord&)>&) override {
    return unused();
  }
  // The usage sink never touches the tenancy tables.
  Result<store::TenancyState> load_tenancy() override { return unused(); }
  Result<std::uint64_t> tenancy_revision() override { return unused(); }
  Result<std::uint64_t> commit_tenancy(const store::TenancyCommit&) override { return unused(); }
  Result<std::optional<store::IdempotentReply>> find_idempotent(std::string_view,
                                                                std::int64_t) override {
    return unused();
  }
  Result<void> purge_idempotent(std::int64_t) override { return unused(); }
  Result<std::vector<store::AuditEntry>> list_audit(const store::AuditQuery&) override {
    return unused();
  }

 private:
  static Error unused() { return Error(ErrorKind::kInternal, "not used by the usage sink"); }

  Ledger& ledger_;
};

store::UsageRecord record(int n) {
  store::UsageRecord r;
  r.record_id = "test-" + std::to_string(n);
  r.request_id = "req-" + std::to_string(n);
  r.alias = "chat";
  r.output_tokens = static_cast<std::uint64_t>(n);
  return r;
}

class UsageSinkTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("sluice-sink-test-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    ledger_.clock = &clock_;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  UsageSinkOptions options(std::size_t batch = 3) {
    UsageSinkOptions o;
    o.workers = 2;
    o.queue_capacity = 64;
    o.batch_size = batch;
    o.flush_interval = 200ms;
    o.spool_path = (dir_ / "usage.spool").string();
    o.slow_insert = 1000ms;
    o.retry_interval = 1000ms;
    o.clock = &clock_;
    return o;
  }
  std::unique_ptr<UsageSink> make_sink(UsageSinkOptions o) {
    return std::make_unique<UsageSink>(
        std::move(o), [this]() -> Result<std::unique_ptr<store::Store>> {
          if (ledger_.fail_open) {
            return Error(ErrorKind::kInternal, "connection refused");
          }
          return std::unique_ptr<store::Store>(std::make_unique<MemoryStore>(ledger_));
        });
  }

  std::filesystem::path dir_;
  SimulatedClock clock_;
  Ledger ledger_;
};

TEST_F(UsageSinkTest, FullBatchesGoAtOnceAndTheRestAfterTheFlushInterval) {
  auto sink = make_sink(options(3));
  for (int i = 0; i < 7; ++i) {
    ASSERT_TRUE(sink->submit(static_cast<std::size_t>(i % 2), record(i)));
  }
  EXPECT_EQ(sink->queue_depth(), 7u);
  sink->run_once_for_test();
  EXPECT_EQ(sink->queue_depth(), 0u);
  EXPECT_EQ(ledger_.inserts, 2);  // two full batches of 3
  EXPECT_EQ(ledger_.rows.size(), 6u);
  EXPECT_EQ(sink->written(), 6u);
  EXPECT_EQ(sink->store_state(), UsageSink::StoreState::kUp);

  clock_.advance(199ms);
  sink->run_once_for_test();
  EXPECT_EQ(ledger_.rows.size(), 6u);  // the seventh waits for its batch to fill or age
  clock_.advance(1ms);
  sink->run_once_for_test();
  EXPECT_EQ(ledger_.rows.size(), 7u);
  EXPECT_EQ(ledger_.inserts, 3);
  EXPECT_EQ(sink->spool_records(), 0u);
}

TEST_F(UsageSinkTest, FailedBatchIsSpooledAndReplayedWhenTheStoreReturns) {
  auto sink = make_sink(options(3));
  sink->run_once_for_test();  // store opened and up
  ledger_.fail = true;
  for (int i = 0; i < 5; ++i) {
    sink->submit(0, record(i));
  }
  sink->run_once_for_test();  // the full batch fails and is spooled
  EXPECT_EQ(sink->spool_records(), 3u);
  clock_.advance(200ms);  // the rest is due: spooled without trying the store again
  sink->run_once_for_test();
  EXPECT_EQ(sink->store_state(), UsageSink::StoreState::kDown);
  EXPECT_EQ(ledger_.rows.size(), 0u);
  EXPECT_EQ(sink->spool_records(), 5u);  // the failed batch and the one after it
  EXPECT_GT(sink->spool_bytes(), 0u);
  EXPECT_EQ(sink->spooled(), 5u);

  ledger_.fail = false;
  clock_.advance(799ms);  // 999 ms after the failure
  sink->run_once_for_test();
  EXPECT_EQ(sink->store_state(), UsageSink::StoreState::kDown);  // not retried before its time
  clock_.advance(1ms);
  sink->run_once_for_test();
  EXPECT_EQ(sink->store_state(), UsageSink::StoreState::kUp);
  EXPECT_EQ(ledger_.rows.size(), 5u);
  EXPECT_EQ(sink->spool_records(), 0u);
  EXPECT_EQ(sink->spool_bytes(), 0u);
  EXPECT_EQ(std::filesystem::file_size(dir_ / "usage.spool"), 0u);
}

TEST_F(UsageSinkTest, UnreachableAtStartSpoolsThenCatchesUp) {
  ledger_.fail_open = true;
  auto sink = make_sink(options(2));
  sink->submit(1, record(1));
  sink->submit(1, record(2));
  sink->run_once_for_test();
  EXPECT_EQ(sink->store_state(), UsageSink::StoreState::kDown);
  EXPECT_EQ(sink->spool_records(), 2u);
  ledger_.fail_open = false;
  clock_.advance(1s);
  sink->run_once_for_test();
  EXPECT_EQ(ledger_.rows.size(), 2u);
  EXPECT_EQ(sink->spool_records(), 0u);
}

TEST_F(UsageSinkTest, SlowInsertKeepsTheBatchButSpoolsWhatFollows) {
  auto sink = make_sink(options(2));
  sink->run_once_for_test();
  ledger_.insert_takes = 1500ms;  // over slow_insert (1000 ms)
  sink->submit(0, record(1));
  sink->submit(0, record(2));
  sink->run_once_for_test();
  EXPECT_EQ(ledger_.rows.size(), 2u);
  EXPECT_EQ(sink->store_state(), UsageSink::StoreState::kDown);
  sink->submit(0, record(3));
  sink->submit(0, record(4));
  sink->run_once_for_test();
  EXPECT_EQ(ledger_.rows.size(), 2u);
  EXPECT_EQ(sink->spool_records(), 2u);
  ledger_.insert_takes = 0ms;
  clock_.advance(1s);
  sink->run_once_for_test();
  EXPECT_EQ(ledger_.rows.size(), 4u);
  EXPECT_EQ(sink->spool_records(), 0u);
}

TEST_F(UsageSinkTest, ReplayInterruptedHalfwayStoresEveryRecordOnce) {
  auto sink = make_sink(options(2));
  sink->run_once_for_test();
  ledger_.fail = true;
  for (int i = 0; i < 6; ++i) {
    sink->submit(0, record(i));
  }
  sink->run_once_for_test();
  ASSERT_EQ(sink->spool_records(), 6u);
  ledger_.fail = false;
  ledger_.fail_insert_at = ledger_.calls + 1;  // the replay's second batch fails
  clock_.advance(1s);
  sink->run_once_for_test();
  EXPECT_EQ(sink->store_state(), UsageSink::StoreState::kDown);
  EXPECT_EQ(ledger_.rows.size(), 2u);
  EXPECT_EQ(sink->spool_records(), 6u);  // emptied only once all of it is stored
  clock_.advance(1s);
  sink->run_once_for_test();
  EXPECT_EQ(ledger_.rows.size(), 6u);
  EXPECT_EQ(sink->spool_records(), 0u);
}

TEST_F(UsageSinkTest, ReplayOfRecordsAlreadyStoredAddsNothing) {
  {
    auto spool = Spool::open((dir_ / "usage.spool").string());
    ASSERT_TRUE(spool);
    std::vector<store::UsageRecord> batch{record(1), record(2), record(3)};
    ASSERT_TRUE((*spool)->append(batch));
  }
  ledger_.rows.emplace("test-1", record(1));  // written before a crash cut the spool's emptying
  auto sink = make_sink(options(10));
  EXPECT_EQ(sink->spool_records(), 3u);
  sink->run_once_for_test();
  EXPECT_EQ(ledger_.rows.size(), 3u);
  EXPECT_EQ(sink->spool_records(), 0u);
}

TEST_F(UsageSinkTest, SpoolFromAnEarlierRunIsReplayedOnStart) {
  ledger_.fail = true;
  {
    auto first = make_sink(options(10));
    for (int i = 0; i < 4; ++i) {
      first->submit(0, record(i));
    }
    first->stop(1s);  // store down: everything to the spool
    EXPECT_EQ(first->spool_records(), 4u);
  }
  ledger_.fail = false;
  auto second = make_sink(options(10));
  EXPECT_EQ(second->spool_records(), 4u);
  second->run_once_for_test();
  EXPECT_EQ(ledger_.rows.size(), 4u);
  EXPECT_EQ(second->spool_records(), 0u);
}

// A store that answers, but more slowly than records arrive: a pass inserts for one flush
// interval, spools the batches it has no time for (the store stays up, nothing waits in the
// queues), and later passes replay them.
TEST_F(UsageSinkTest, SlowerThanTheTrafficSpoolsWhatItHasNoTimeForAndCatchesUp) {
  auto sink = make_sink(options(2));
  sink->run_once_for_test();
  ledger_.insert_takes = 150ms;  // under slow_insert (1000 ms); flush interval 200 ms
  for (int i = 0; i < 8; ++i) {
    ASSERT_TRUE(sink->submit(static_cast<std::size_t>(i % 2), record(i)));
  }
  sink->run_once_for_test();
  EXPECT_EQ(ledger_.inserts, 2);  // at 0 and 150 ms; at 300 ms the pass had used its time
  EXPECT_EQ(ledger_.rows.size(), 4u);
  EXPECT_EQ(sink->spool_records(), 4u);
  EXPECT_EQ(sink->deferred(), 4u);
  EXPECT_EQ(sink->spooled(), 4u);
  EXPECT_EQ(sink->queue_depth(), 0u);
  EXPECT_EQ(sink->store_state(), UsageSink::StoreState::kUp) << "slow is not down";

  sink->run_once_for_test();  // replay, two batches in the pass's 200 ms
  EXPECT_EQ(ledger_.rows.size(), 8u);
  EXPECT_EQ(sink->spool_records(), 0u);
  for (int i = 0; i < 8; ++i) {
    EXPECT_EQ(ledger_.rows.count("test-" + std::to_string(i)), 1u) << i;
  }
  EXPECT_EQ(sink->dropped(), 0u);
  EXPECT_EQ(sink->deferred(), 4u);
}

// The rejected file's records, in order.
std::vector<store::UsageRecord> rejected_records(const std::string& path) {
  std::vector<store::UsageRecord> out;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    auto r = record_from_json(line);
    EXPECT_TRUE(r) << line;
    if (r) {
      out.push_back(std::move(*r));
    }
  }
  return out;
}

// A record the store refuses for what it holds (an upstream's absurd token count) is found by
// halving the batch, kept aside, and the rest of its batch is stored: it does not hold the
// ledger back, on the live path nor in a replay.
TEST_F(UsageSinkTest, ARecordTheStoreRefusesIsSetAsideAndTheRestStored) {
  auto sink = make_sink(options(8));
  sink->run_once_for_test();
  ledger_.refuse = {"test-2", "test-5"};
  for (int i = 0; i < 8; ++i) {
    ASSERT_TRUE(sink->submit(0, record(i)));
  }
  sink->run_once_for_test();
  EXPECT_EQ(ledger_.rows.size(), 6u);
  EXPECT_EQ(ledger_.rows.count("test-2") + ledger_.rows.count("test-5"), 0u);
  EXPECT_EQ(sink->rejected(), 2u);
  EXPECT_EQ(sink->written(), 6u);
  EXPECT_EQ(sink->spool_records(), 0u);
  EXPECT_EQ(sink->dropped(), 0u);
  EXPECT_EQ(sink->store_state(), UsageSink::StoreState::kUp) << "a bad record is not a bad store";
  auto kept = rejected_records(sink->rejected_path());
  ASSERT_EQ(kept.size(), 2u);
  EXPECT_EQ(kept[0].record_id, "test-2");
  EXPECT_EQ(kept[1].record_id, "test-5");
  EXPECT_EQ(kept[1].output_tokens, 5u) << "kept whole";
  // Like the spool and the ledger: what keys spent is nobody else's business.
  namespace fs = std::filesystem;
  EXPECT_EQ(fs::status(sink->rejected_path()).permissions() & fs::perms::all,
            fs::perms::owner_read | fs::perms::owner_write);

  // The same in a replay: the store was down when the batch came, and is back.
  ledger_.fail = true;
  ledger_.refuse = {"test-9"};
  for (int i = 8; i < 16; ++i) {
    ASSERT_TRUE(sink->submit(1, record(i)));
  }
  sink->run_once_for_test();
  EXPECT_EQ(sink->spool_records(), 8u);
  ledger_.fail = false;
  clock_.advance(1s);
  sink->run_once_for_test();
  EXPECT_EQ(ledger_.rows.size(), 13u);
  EXPECT_EQ(sink->spool_records(), 0u) << "the spool is emptied, the refused record set aside";
  EXPECT_EQ(sink->rejected(), 3u);
  EXPECT_EQ(rejected_records(sink->rejected_path()).back().record_id, "test-9");
}

TEST_F(UsageSinkTest, FullQueueDropsAndCounts) {
  auto o = options(10);
  o.queue_capacity = 4;  // 2 per worker
  auto sink = make_sink(o);
  EXPECT_TRUE(sink->submit(0, record(1)));
  EXPECT_TRUE(sink->submit(0, record(2)));
  EXPECT_FALSE(sink->submit(0, record(3)));
  EXPECT_TRUE(sink->submit(1, record(4)));  // the other worker's queue has room
  EXPECT_EQ(sink->dropped(), 1u);
  EXPECT_EQ(sink->queue_depth(), 3u);
  sink->run_once_for_test();
  EXPECT_TRUE(sink->submit(0, record(5)));  // room again once the writer took them
  EXPECT_EQ(sink->dropped(), 1u);
}

TEST_F(UsageSinkTest, StopFlushesEverythingToTheStore) {
  auto sink = make_sink(options(100));
  for (int i = 0; i < 5; ++i) {
    sink->submit(static_cast<std::size_t>(i % 2), record(i));
  }
  sink->stop(1s);
  EXPECT_EQ(ledger_.rows.size(), 5u);
  EXPECT_FALSE(sink->submit(0, record(9)));  // stopped: counted, never silently kept
  EXPECT_EQ(sink->dropped(), 1u);
}

TEST_F(UsageSinkTest, StopPastItsDeadlineSpoolsWhatIsLeft) {
  auto sink = make_sink(options(2));
  sink->run_once_for_test();
  ledger_.insert_takes = 600ms;  // each batch eats into the 1 s drain deadline
  for (int i = 0; i < 6; ++i) {
    sink->submit(0, record(i));
  }
  ledger_.insert_takes = 600ms;
  // Queued but not yet due when the stop comes.
  sink->stop(1s);
  EXPECT_EQ(ledger_.rows.size() + sink->spool_records(), 6u);
  EXPECT_GT(sink->spool_records(), 0u);
  EXPECT_EQ(sink->dropped(), 0u);
}

TEST_F(UsageSinkTest, RealWriterThreadWritesAndFlushes) {
  auto o = options(4);
  o.clock = nullptr;  // real time: the thread polls
  o.flush_interval = 20ms;
  ledger_.clock = nullptr;
  auto sink = make_sink(o);
  sink->start();
  for (int i = 0; i < 50; ++i) {
    sink->submit(static_cast<std::size_t>(i % 2), record(i));
  }
  sink->stop(5s);
  EXPECT_EQ(ledger_.rows.size(), 50u);
  EXPECT_EQ(sink->written(), 50u);
}

// Spool framing.

class SpoolTest : public UsageSinkTest {
 protected:
  std::string path() const { return (dir_ / "usage.spool").string(); }
  std::vector<std::string> ids() {
    auto spool = Spool::open(path());
    EXPECT_TRUE(spool);
    auto chunk = (*spool)->read(0, 1000);
    EXPECT_TRUE(chunk);
    EXPECT_TRUE(chunk->at_end);
    std::vector<std::string> out;
    for (const auto& r : chunk->records) {
      out.push_back(r.record_id);
    }
    return out;
  }
  void append(std::vector<store::UsageRecord> records) {
    auto spool = Spool::open(path());
    ASSERT_TRUE(spool);
    ASSERT_TRUE((*spool)->append(records));
  }
};

TEST_F(SpoolTest, TornLastFrameIsCutOffAndLaterFramesFollowValidOnes) {
  append({record(1), record(2), record(3)});
  const auto whole = std::filesystem::file_size(path());
  {
    // A crash in the middle of the next append: a header and half a payload.
    std::ofstream out(path(), std::ios::binary | std::ios::app);
    const std::string payload = record_to_json(record(4));
    out << "SLSP";
    const std::uint32_t len = static_cast<std::uint32_t>(payload.size());
    out.write(reinterpret_cast<const char*>(&len), 4);
    out.write("\0\0\0\0", 4);
    out << payload.substr(0, payload.size() / 2);
  }
  {
    auto spool = Spool::open(path());
    ASSERT_TRUE(spool);
    EXPECT_EQ((*spool)->records(), 3u);
    EXPECT_GT((*spool)->skipped_bytes(), 0u);
    EXPECT_EQ(std::filesystem::file_size(path()), whole);  // the torn tail is gone
  }
  append({record(5)});
  EXPECT_EQ(ids(), (std::vector<std::string>{"test-1", "test-2", "test-3", "test-5"}));
}

TEST_F(SpoolTest, EveryTruncationPointLeavesAValidPrefix) {
  append({record(1), record(2)});
  const auto whole = std::filesystem::file_size(path());
  std::string bytes(whole, '\0');
  {
    std::ifstream in(path(), std::ios::binary);
    in.read(bytes.data(), static_cast<std::streamsize>(whole));
  }
  const std::size_t first_end = record_to_json(record(1)).size() + 12;
  for (std::size_t cut = 0; cut <= whole; ++cut) {
    {
      std::ofstream out(path(), std::ios::binary | std::ios::trunc);
      out.write(bytes.data(), static_cast<std::streamsize>(cut));
    }
    const std::size_t expect = cut == whole ? 2 : cut >= first_end ? 1 : 0;
    EXPECT_EQ(ids().size(), expect) << "cut at " << cut;
  }
}

TEST_F(SpoolTest, DamagedFrameInTheMiddleIsSkippedNotTheRest) {
  append({record(1), record(2), record(3)});
  {
    std::fstream f(path(), std::ios::binary | std::ios::in | std::ios::out);
    const std::size_t first = record_to_json(record(1)).size() + 12;
    f.seekp(static_cast<std::streamoff>(first + 20));  // inside the second payload
    f.put('#');
  }
  EXPECT_EQ(ids(), (std::vector<std::string>{"test-1", "test-3"}));
}

// A record with every field away from its default, two attempts.
store::UsageRecord full_record() {
  store::UsageRecord r;
  r.record_id = "abc-1-7";
  r.request_id = "req";
  r.started_at_ms = 1'800'000'000'000;
  r.ended_at_ms = 1'800'000'000'123;
  r.key_name = "team-a";
  r.key_group = "g";
  r.tenant = "t";
  r.feature = "search";
  r.ingress = "anthropic";
  r.operation = "chat";
  r.alias = "fast";
  r.provider = "claude";
  r.model = "claude-x";
  r.stream = true;
  r.usage_reported = true;
  r.input_tokens = 1;
  r.output_tokens = 2;
  r.cache_read_tokens = 3;
  r.cache_write_tokens = 4;
  r.reasoning_tokens = 5;
  r.status = 200;
  r.outcome = "midstream_error";
  r.error_class = "upstream_protocol";
  r.finish_reason = "stop";
  r.total_us = 10;
  r.overhead_us = 11;
  r.queue_us = 12;
  r.upstream_ttfb_us = 13;
  r.ttft_us = 14;
  r.output_tokens_per_s_milli = 15;
  r.priced = true;
  r.price_version = "2026-11-01";
  r.currency = "EUR";
  r.cost_micros = 16;
  r.cost_items = R"([{"item":"input"}])";
  store::AttemptRecord& a = r.attempts.emplace_back();
  a.provider = "p";
  a.model = "m";
  a.path = "0.1";
  a.status = 503;
  a.error_class = "upstream_status";
  a.acquire_us = 1;
  a.first_byte_us = 2;
  a.duration_us = 3;
  a.backoff_ms = 4;
  a.reused_connection = true;
  store::AttemptRecord& b = r.attempts.emplace_back();
  b.provider = "q";
  b.model = "n";
  b.path = "1";
  b.status = 200;
  return r;
}

TEST(RecordJson, EveryFieldRoundTrips) {
  const store::UsageRecord r = full_record();
  auto back = record_from_json(record_to_json(r));
  ASSERT_TRUE(back);
  EXPECT_EQ(record_to_json(*back), record_to_json(r));
  EXPECT_EQ(back->attempts.size(), 2u);
  EXPECT_EQ(back->attempts[0].backoff_ms, 4);
  EXPECT_EQ(back->cost_items, r.cost_items);
  EXPECT_FALSE(record_from_json("[]"));
  EXPECT_FALSE(record_from_json(R"({"record_id":"x","status":"two hundred"})"));
}

// The sink's queue encoding: every field comes back, records follow each other in one buffer,
// and a buffer cut anywhere inside a record reads as an error, never as a record.
TEST(RecordBytes, EveryFieldRoundTripsAndRecordsFollowEachOther) {
  const store::UsageRecord r = full_record();
  store::UsageRecord plain;
  plain.record_id = "plain";
  std::string bytes;
  append_record_bytes(bytes, r);
  const std::size_t first = bytes.size();
  append_record_bytes(bytes, plain);

  std::string_view in = bytes;
  store::UsageRecord back;
  ASSERT_TRUE(read_record_bytes(in, back));
  EXPECT_EQ(record_to_json(back), record_to_json(r));
  EXPECT_EQ(in.size(), bytes.size() - first);
  store::UsageRecord back2;
  ASSERT_TRUE(read_record_bytes(in, back2));
  EXPECT_EQ(record_to_json(back2), record_to_json(plain));
  EXPECT_TRUE(in.empty());

  for (std::size_t cut = 0; cut < first; ++cut) {
    std::string_view torn(bytes.data(), cut);
    store::UsageRecord partial;
    EXPECT_FALSE(read_record_bytes(torn, partial)) << "cut at " << cut;
  }
}

}  // namespace
}  // namespace sluice::metering
