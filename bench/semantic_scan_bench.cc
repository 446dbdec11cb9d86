// SemanticIndex::nearest() on the request path (cache/semantic_index.h): the brute-force scan
// of one bucket that every semantic lookup makes, on the worker thread, under a shared lock.
// Arguments: vectors in the bucket, dimensions. The measure to read is time per lookup; the
// docs quote it to justify a scan over an approximate index below the memory bound.
//
//   BM_Nearest/<vectors>/<dimensions>

#include <random>

#include <benchmark/benchmark.h>

#include "cache/semantic_index.h"

namespace {

using sluice::cache::Key;
using sluice::cache::SemanticIndex;

std::vector<float> random_unit(std::mt19937& rng, std::size_t dimensions) {
  std::normal_distribution<float> normal;
  std::vector<float> v(dimensions);
  for (float& x : v) {
    x = normal(rng);
  }
  SemanticIndex::normalize(v);
  return v;
}

void BM_Nearest(benchmark::State& state) {
  const auto vectors = static_cast<std::size_t>(state.range(0));
  const auto dimensions = static_cast<std::size_t>(state.range(1));
  SemanticIndex index(std::uint64_t{4} << 30);
  std::mt19937 rng(7);
  const Key bucket{};
  for (std::size_t i = 0; i < vectors; ++i) {
    Key answer{};
    answer[0] = static_cast<std::uint8_t>(i);
    answer[1] = static_cast<std::uint8_t>(i >> 8);
    answer[2] = static_cast<std::uint8_t>(i >> 16);
    index.insert(bucket, answer, random_unit(rng, dimensions));
  }
  const std::vector<float> query = random_unit(rng, dimensions);
  for (auto _ : state) {
    benchmark::DoNotOptimize(index.nearest(bucket, query, 0.97F));
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * vectors));
}

BENCHMARK(BM_Nearest)
    ->Args({100, 1536})
    ->Args({1000, 512})
    ->Args({1000, 1536})
    ->Args({10000, 1536})
    ->Unit(benchmark::kMicrosecond);

}  // namespace
