// The usage writer's store cost: Store::insert_usage in batches as UsageSink writes them,
// records shaped like the proxy's (one attempt, priced, a request id of 32 hex digits, usage and
// cost that differ per request). The figure that matters is CPU per record: at c=64 the writer
// shares the machine with the workers. Second argument: 1 = request ids as Sluice generates them
// (time first), 0 = random ones (as a caller's own x-request-id may be).
//
// SQLite always; PostgreSQL when SLUICE_BENCH_POSTGRES_URL names a database (records are added
// to its ledger: use a scratch one, e.g. the test services' SLUICE_TEST_POSTGRES_URL). For
// PostgreSQL two figures matter: CPU is the gateway's side only (building the statement's
// parameters, libpq; the server's work is on its own machine in a fleet), and real time per
// record bounds what one writer thread sustains (a round trip per batch, the server's insert
// and rollup upsert): a gateway whose requests outrun it spools and replays.
//
//   build/release/bench/store_bench [--benchmark_filter=Sqlite|Postgres]
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>
#include <unistd.h>

#include "store/postgres_store.h"
#include "store/sqlite_store.h"
#include "store/usage_record.h"

namespace {

using sluice::store::PostgresStore;
using sluice::store::SqliteStore;
using sluice::store::UsageRecord;

UsageRecord sample(std::uint64_t sequence, bool ordered_ids, std::mt19937_64& rng) {
  UsageRecord r;
  r.record_id = "i7f3a-" + std::to_string(sequence);
  char request_id[48];  // 32 hex digits; room for what -Wformat-truncation assumes of %llx
  if (ordered_ids) {    // about 30 requests per millisecond
    std::snprintf(request_id, sizeof request_id, "%012llx%020llx",
                  static_cast<unsigned long long>(1'764'547'200'000 + sequence / 30),
                  static_cast<unsigned long long>(rng() >> 4));
  } else {
    std::snprintf(request_id, sizeof request_id, "%016llx%016llx",
                  static_cast<unsigned long long>(rng()), static_cast<unsigned long long>(rng()));
  }
  r.request_id = request_id;
  r.started_at_ms = 1'764'547'200'000 + static_cast<std::int64_t>(sequence);
  r.ended_at_ms = r.started_at_ms + 3;
  r.key_name = "team-" + std::to_string(sequence % 50);
  r.key_group = "group-" + std::to_string(sequence % 10);
  r.feature = sequence % 3 == 0 ? "search" : "";
  r.ingress = "openai_chat";
  r.operation = "chat";
  r.alias = "gpt-4o-mini";
  r.provider = "openai";
  r.model = "gpt-4o-mini-2024-07-18";
  r.usage_reported = true;
  // Usage, timings and cost differ from request to request (the segments' encoding shares
  // what repeats with the record before, so identical records would flatter it).
  r.input_tokens = 40 + sequence * 7919 % 6000;
  r.output_tokens = 1 + sequence * 104729 % 900;
  r.status = 200;
  r.outcome = "complete";
  r.finish_reason = "stop";
  auto& a = r.attempts.emplace_back();
  a.provider = "openai";
  a.model = r.model;
  a.path = "0";
  a.status = 200;
  a.acquire_us = 4;
  a.first_byte_us = 300 + static_cast<std::int64_t>(rng() % 2'000);
  a.duration_us = a.first_byte_us + static_cast<std::int64_t>(r.output_tokens) * 20;
  r.total_us = a.duration_us + 60;
  r.overhead_us = 40 + static_cast<std::int64_t>(rng() % 60);
  r.queue_us = 0;
  r.upstream_ttfb_us = a.first_byte_us;
  r.ttft_us = -1;
  r.output_tokens_per_s_milli = static_cast<std::int64_t>(r.output_tokens) * 1'000'000'000 /
                                std::max<std::int64_t>(1, a.duration_us);
  r.priced = true;
  r.price_version = "2026-11-30";
  // As the built-in catalogue explains a charge (pricing.cc), amounts in decimal units.
  const std::uint64_t in_nanos = r.input_tokens * 150;  // $0.15 per million
  const std::uint64_t out_nanos = r.output_tokens * 600;
  r.cost_micros = static_cast<std::int64_t>((in_nanos + out_nanos + 500) / 1000);
  auto decimal = [](std::uint64_t nanos) {
    char text[32];
    std::snprintf(text, sizeof text, "0.%09llu", static_cast<unsigned long long>(nanos));
    return std::string(text);
  };
  r.cost_items = R"({"version":"2026-11-30","entry":"adapter openai, model gpt-4o-mini",)"
                 R"("currency":"USD","items":[{"name":"input","tokens":)" +
                 std::to_string(r.input_tokens) + R"(,"rate":"0.15","amount":")" +
                 decimal(in_nanos) + R"(","rule":"base"},{"name":"output","tokens":)" +
                 std::to_string(r.output_tokens) + R"(,"rate":"0.6","amount":")" +
                 decimal(out_nanos) + R"(","rule":"base"}],"subtotal":")" +
                 decimal(in_nanos + out_nanos) + R"(","total":")" + decimal(in_nanos + out_nanos) +
                 R"(","micros":)" + std::to_string(r.cost_micros) + R"(,"rounding":"half_up"})";
  return r;
}

// Writes batches of `state.range(0)` records into `store`, after 200 batches of 512 so the
// ledger is not empty (index pages are no longer all in one leaf).
void insert_batches(benchmark::State& state, sluice::store::Store& store) {
  const auto batch_size = static_cast<std::size_t>(state.range(0));
  const bool ordered_ids = state.range(1) != 0;
  if (!store.migrate()) {
    state.SkipWithError("cannot migrate the store");
    return;
  }
  std::mt19937_64 rng(std::random_device{}());
  // Record ids unique to this run: a database kept from an earlier run skips replays.
  const std::string run = std::to_string(::getpid()) + "x" + std::to_string(rng() % 1'000'000);
  std::uint64_t sequence = 0;
  std::vector<UsageRecord> batch;
  auto fill = [&](std::size_t n) {
    batch.clear();
    for (std::size_t i = 0; i < n; ++i) {
      batch.push_back(sample(++sequence, ordered_ids, rng));
      batch.back().record_id.insert(0, run);
    }
  };
  for (int warm = 0; warm < 200; ++warm) {
    fill(512);
    if (!store.insert_usage(batch)) {
      state.SkipWithError("insert failed");
      return;
    }
  }
  for (auto _ : state) {
    state.PauseTiming();
    fill(batch_size);
    state.ResumeTiming();
    if (!store.insert_usage(batch)) {
      state.SkipWithError("insert failed");
      break;
    }
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * batch_size));
}

void BM_SqliteInsertUsage(benchmark::State& state) {
  const std::string path = "/tmp/sluice-store-bench-" + std::to_string(::getpid()) + ".db";
  std::remove(path.c_str());
  if (auto store = SqliteStore::open(path)) {
    insert_batches(state, **store);
  } else {
    state.SkipWithError("cannot open the store");
  }
  for (const char* suffix : {"", "-wal", "-shm"}) {
    std::remove((path + suffix).c_str());
  }
}
BENCHMARK(BM_SqliteInsertUsage)
    ->ArgsProduct({{64, 512}, {1, 0}})
    ->ArgNames({"batch", "time_ordered_ids"})
    ->MeasureProcessCPUTime()
    ->UseRealTime();

// CPU here is the bench process's (the gateway's side); compare real time with CPU time for
// the round trips and the server's work. Each run writes into a schema of its own, dropped
// at the end (a run stores ~2 GB otherwise). The URL must be a URI (postgresql://...).
void BM_PostgresInsertUsage(benchmark::State& state) {
  const char* url = std::getenv("SLUICE_BENCH_POSTGRES_URL");
  if (url == nullptr || *url == '\0') {
    state.SkipWithError("SLUICE_BENCH_POSTGRES_URL is not set");
    return;
  }
  auto admin = PostgresStore::open(url);
  const std::string schema = "sluice_store_bench_" + std::to_string(::getpid());
  if (!admin || !(*admin)->execute_for_test("DROP SCHEMA IF EXISTS " + schema +
                                            " CASCADE; CREATE SCHEMA " + schema)) {
    state.SkipWithError("cannot create a schema for the bench");
    return;
  }
  const std::string base(url);
  if (auto store = PostgresStore::open(base + (base.find('?') == std::string::npos ? "?" : "&") +
                                       "options=-csearch_path%3D" + schema)) {
    insert_batches(state, **store);
  } else {
    state.SkipWithError("cannot open the store");
  }
  (void)(*admin)->execute_for_test("DROP SCHEMA " + schema + " CASCADE");
}
BENCHMARK(BM_PostgresInsertUsage)
    ->ArgsProduct({{64, 512}, {1, 0}})
    ->ArgNames({"batch", "time_ordered_ids"})
    ->MeasureProcessCPUTime()
    ->UseRealTime();

}  // namespace
