// Google Benchmark for the local admission path: LimitPlan::charges (the per-request lookup)
// plus LocalLimiter::decide over a request's buckets (key rpm+tpm, group rpm+tpm+slots, model
// tpm, instance slots) and the release of its slots, with allocations counted per request.
#include <chrono>
#include <memory>
#include <string>

#include <benchmark/benchmark.h>

#include "alloc_counter.h"
#include "limits/limit_plan.h"
#include "limits/local_limiter.h"
#include "providers/registry.h"

namespace {

using namespace sluice;

std::shared_ptr<const config::Config> bench_config() {
  auto result = providers::load_config_string(R"y(version: 1
providers:
  - { id: mock, adapter: mock }
routes:
  - { alias: chat, provider: mock, model: m }
keys:
  - { name: dev, group: research, key: sk-0123456789abcdef }
limits:
  key: { rpm: 1000000000, tpm: 1000000000000 }
  groups: { research: { rpm: 1000000000, tpm: 1000000000000, concurrency: 1000000 } }
  models: { chat: { tpm: 1000000000000 } }
  instance: { concurrency: 1000000 }
)y",
                                              "bench.yaml");
  if (!result) {
    throw std::runtime_error(result.error().message());
  }
  return *result;
}

void BM_LocalAdmission(benchmark::State& state) {
  limits::LocalLimiter limiter;
  const auto config = bench_config();
  const limits::LimitPlan plan(config, limiter);
  const config::Key* key = &config->keys[0];
  const std::size_t allocs_before = sluice::bench::allocation_count();
  for (auto _ : state) {
    const limits::Charges charges = plan.charges(key, "chat", "mock", 120);
    limits::Lease lease;
    const limits::Decision d = limiter.decide(charges, std::chrono::steady_clock::now(), lease);
    benchmark::DoNotOptimize(d);
    limiter.release(lease);
  }
  state.counters["allocs_per_request"] =
      benchmark::Counter(static_cast<double>(sluice::bench::allocation_count() - allocs_before) /
                         static_cast<double>(state.iterations()));
}
BENCHMARK(BM_LocalAdmission);

}  // namespace
