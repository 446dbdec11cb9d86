#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "metering/pricing.h"

// `sluice estimate`: what a workload would cost under a price catalogue. Pure functions over a
// PriceBook; used by the command line only.
namespace sluice::metering {

struct EstimateInput {
  std::string model;
  // Adapter kind (openai, anthropic, gemini, ...); empty = the first of kEstimateAdapterKinds
  // whose entries price the model.
  std::string adapter;
  // Average tokens of one call. `input_tokens` is the whole prompt, cache reads included, as
  // providers report it; `cache_read_tokens` is the part of it read from a cache.
  std::uint64_t input_tokens = 0;
  std::uint64_t output_tokens = 0;
  std::uint64_t cache_read_tokens = 0;
  std::uint64_t calls_per_day = 1;
  std::int64_t at_ms = 0;  // fixes the price version and any time-of-day window
};

// Adapter kinds tried, in order, when EstimateInput::adapter is empty.
inline constexpr std::string_view kEstimateAdapterKinds[] = {
    "openai", "anthropic",         "gemini", "azure_openai", "bedrock",
    "vertex", "openai_compatible", "mock"};

struct Estimate {
  bool priced = false;
  std::string adapter;  // the kind that priced it
  Charge per_call;
  std::string per_call_exact, daily_exact, monthly_exact;  // currency units, exact decimals
  std::int64_t daily_micros = 0, monthly_micros = 0;       // rounded once, half up
};

inline constexpr std::uint64_t kDaysPerMonth = 30;

// Prices one average call, then calls_per_day and 30 days of them (exact products of the
// unrounded per-call amount, each rounded once). Fails only on inconsistent input (cache reads
// above input tokens, a volume whose cost does not fit in int64 micros).
Result<Estimate> estimate_cost(const PriceBook& book, const EstimateInput& input);

// The report `sluice estimate` prints; an unaccounted model gets a message saying so.
std::string format_estimate(const PriceBook& book, const EstimateInput& input,
                            const Estimate& estimate);

}  // namespace sluice::metering
