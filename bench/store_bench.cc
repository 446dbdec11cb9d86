// The usage writer's store cost: SqliteStore::insert_usage in batches as UsageSink writes them,
// records shaped like the proxy's (one attempt, priced, a request id of 32 hex digits). The
// figure that matters is CPU per record: at c=64 the writer shares the machine with the workers.
// Second argument: 1 = request ids as Sluice generates them (time first), 0 = random ones (as a
// caller's own x-request-id may be): the request_id index pays for random positions.
//
//   build/release/bench/store_bench [--benchmark_filter=Sqlite]
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>
#include <unistd.h>

#include "store/sqlite_store.h"
#include "store/usage_record.h"

namespace {

using sluice::store::SqliteStore;
using sluice::store::UsageRecord;

UsageRecord sample(std::uint64_t sequence, bool ordered_ids, std::mt19937_64& rng) {
  UsageRecord r;
  r.record_id = "i7f3a-" + std::to_string(sequence);
  char request_id[33];
  if (ordered_ids) {  // about 30 requests per millisecond
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
  r.input_tokens = 120;
  r.output_tokens = 48;
  r.status = 200;
  r.outcome = "complete";
  r.finish_reason = "stop";
  auto& a = r.attempts.emplace_back();
  a.provider = "openai";
  a.model = r.model;
  a.path = "0";
  a.status = 200;
  a.acquire_us = 4;
  a.first_byte_us = 900;
  a.duration_us = 2'100;
  r.total_us = 2'300;
  r.overhead_us = 60;
  r.queue_us = 0;
  r.upstream_ttfb_us = 900;
  r.ttft_us = -1;
  r.output_tokens_per_s_milli = 22'000'000;
  r.priced = true;
  r.price_version = "builtin-2026-11-30";
  r.cost_micros = 47;
  r.cost_items = R"([{"item":"input","tokens":120,"rate":"0.15","micros":18},)"
                 R"({"item":"output","tokens":48,"rate":"0.6","micros":29}])";
  return r;
}

void BM_SqliteInsertUsage(benchmark::State& state) {
  const auto batch_size = static_cast<std::size_t>(state.range(0));
  const bool ordered_ids = state.range(1) != 0;
  const std::string path = "/tmp/sluice-store-bench-" + std::to_string(::getpid()) + ".db";
  std::remove(path.c_str());
  auto store = SqliteStore::open(path);
  if (!store || !(*store)->migrate()) {
    state.SkipWithError("cannot open the store");
    return;
  }
  std::mt19937_64 rng(42);
  std::uint64_t sequence = 0;
  std::vector<UsageRecord> batch;
  // Start from a ledger that is not empty: index pages are no longer all in one leaf.
  for (int warm = 0; warm < 200; ++warm) {
    batch.clear();
    for (std::size_t i = 0; i < 512; ++i) {
      batch.push_back(sample(++sequence, ordered_ids, rng));
    }
    (void)(*store)->insert_usage(batch);
  }
  for (auto _ : state) {
    state.PauseTiming();
    batch.clear();
    for (std::size_t i = 0; i < batch_size; ++i) {
      batch.push_back(sample(++sequence, ordered_ids, rng));
    }
    state.ResumeTiming();
    if (!(*store)->insert_usage(batch)) {
      state.SkipWithError("insert failed");
      break;
    }
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * batch_size));
  store->reset();
  for (const char* suffix : {"", "-wal", "-shm"}) {
    std::remove((path + suffix).c_str());
  }
}
BENCHMARK(BM_SqliteInsertUsage)
    ->ArgsProduct({{64, 512}, {1, 0}})
    ->ArgNames({"batch", "time_ordered_ids"})
    ->MeasureProcessCPUTime()
    ->UseRealTime();

}  // namespace
