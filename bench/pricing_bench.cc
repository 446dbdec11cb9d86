// PriceBook::charge() on the request path (metering/pricing.h): one call per finished model call,
// on the worker thread. Cases: a plain chat call, one with cache and reasoning sub-items, one
// under a tier, a window and three discount layers, and an unaccounted model. Counter:
// allocs/charge = heap allocations per charge (this binary's operator new), mostly the
// items_json text.
//
//   BM_Charge/<case>

#include <benchmark/benchmark.h>

#include "alloc_counter.h"
#include "core/time_zone.h"
#include "metering/pricing.h"

namespace {

using sluice::metering::ChargeInput;
using sluice::metering::PriceBook;

constexpr std::string_view kCatalogue = R"(catalogue: bench
date: "2026-11-30"
versions:
  - id: b1
    effective_from: 2026-01-01T00:00:00Z
    discounts: [{ name: promo, percent: 5 }]
    provider_discounts:
      openai-batch: [{ name: batch, percent: 50 }]
    prices:
      - { adapter: openai, model: gpt-4.1, input: 2, cache_read: 0.5, output: 8 }
      - { adapter: openai, model: o3, input: 2, cache_read: 0.5, output: 8, reasoning: 8 }
      - adapter: openai
        model: big
        input: 1.25
        cache_read: 0.125
        output: 10
        tiers: [{ above_input_tokens: 200000, input: 2.5, cache_read: 0.25, output: 15 }]
        windows:
          - { name: night, time_zone: UTC, days: all, from: "22:00", to: "06:00", discount_percent: 20 }
        discounts: [{ name: negotiated, percent: 10 }]
)";

const PriceBook& book() {
  static const std::shared_ptr<const PriceBook> b = [] {
    auto loaded = sluice::metering::load_price_book(kCatalogue, "bench");
    if (!loaded) {
      std::abort();
    }
    return *loaded;
  }();
  return *b;
}

void run(benchmark::State& state, ChargeInput in) {
  in.usage_reported = true;
  in.entered_at_ms = sluice::parse_rfc3339_ms("2026-11-30T23:00:00Z").value();
  const PriceBook& b = book();
  const std::size_t before = sluice::bench::allocation_count();
  for (auto _ : state) {
    benchmark::DoNotOptimize(b.charge(in));
  }
  state.counters["allocs/charge"] =
      static_cast<double>(sluice::bench::allocation_count() - before) /
      static_cast<double>(state.iterations());
}

void BM_Charge_Plain(benchmark::State& state) {
  ChargeInput in;
  in.provider = "openai";
  in.adapter = "openai";
  in.model = "gpt-4.1";
  in.usage.input_tokens = 1200;
  in.usage.output_tokens = 350;
  run(state, in);
}

void BM_Charge_CacheAndReasoning(benchmark::State& state) {
  ChargeInput in;
  in.provider = "openai";
  in.adapter = "openai";
  in.model = "o3";
  in.usage.input_tokens = 12000;
  in.usage.cache_read_tokens = 10000;
  in.usage.output_tokens = 3000;
  in.usage.reasoning_tokens = 2500;
  run(state, in);
}

void BM_Charge_TierWindowDiscounts(benchmark::State& state) {
  ChargeInput in;
  in.provider = "openai-batch";
  in.adapter = "openai";
  in.model = "big";
  in.usage.input_tokens = 250000;
  in.usage.cache_read_tokens = 100000;
  in.usage.output_tokens = 2000;
  run(state, in);
}

void BM_Charge_Unaccounted(benchmark::State& state) {
  ChargeInput in;
  in.provider = "openai";
  in.adapter = "openai";
  in.model = "not-priced";
  in.usage.input_tokens = 100;
  run(state, in);
}

}  // namespace

BENCHMARK(BM_Charge_Plain);
BENCHMARK(BM_Charge_CacheAndReasoning);
BENCHMARK(BM_Charge_TierWindowDiscounts);
BENCHMARK(BM_Charge_Unaccounted);
