#include "metering/estimate_command.h"

#include <chrono>
#include <iostream>
#include <memory>
#include <string>

#include <CLI/CLI.hpp>

#include "core/text_file.h"
#include "core/time_zone.h"
#include "metering/estimate.h"
#include "metering/pricing.h"

namespace sluice::metering {
namespace {

struct EstimateOptions {
  EstimateInput input;
  std::string prices;
  std::string at;
};

int estimate(EstimateOptions options) {
  std::shared_ptr<const PriceBook> book;
  if (options.prices.empty()) {
    book = default_price_book();
  } else {
    const auto text = read_text_file(options.prices);
    if (!text) {
      std::cerr << text.error().message() << "\n";
      return 1;
    }
    auto loaded = load_price_book(*text, options.prices);
    if (!loaded) {
      std::cerr << loaded.error().message() << "\n";
      return 1;
    }
    book = *loaded;
  }
  if (options.at.empty()) {
    options.input.at_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                              std::chrono::system_clock::now().time_since_epoch())
                              .count();
  } else {
    auto at = parse_rfc3339_ms(options.at);
    if (!at) {
      std::cerr << "--at: " << at.error().message() << "\n";
      return 1;
    }
    options.input.at_ms = *at;
  }
  auto result = estimate_cost(*book, options.input);
  if (!result) {
    std::cerr << result.error().message() << "\n";
    return 1;
  }
  std::cout << format_estimate(*book, options.input, *result);
  return result->priced ? 0 : 2;
}

}  // namespace

std::function<int()> add_estimate_command(CLI::App& app) {
  auto est = std::make_shared<EstimateOptions>();
  CLI::App* command = app.add_subcommand(
      "estimate", "Per-call, daily and monthly (30-day) cost of a workload, and exit");
  command->add_option("--model", est->input.model, "Upstream model name")->required();
  command->add_option("--provider-kind", est->input.adapter,
                      "Adapter kind (openai, anthropic, gemini, ...); default: the first "
                      "that prices the model");
  command
      ->add_option("--input-tokens", est->input.input_tokens,
                   "Average prompt tokens per call, cache reads included")
      ->required();
  command
      ->add_option("--output-tokens", est->input.output_tokens,
                   "Average output tokens per call, reasoning included")
      ->required();
  command->add_option("--cache-read-tokens", est->input.cache_read_tokens,
                      "Average prompt tokens per call read from a cache");
  command->add_option("--calls-per-day", est->input.calls_per_day, "Calls per day")->default_val(1);
  command->add_option("--prices", est->prices,
                      "Price catalogue file (default: the one built into the binary)");
  command->add_option("--at", est->at, "RFC 3339 instant the prices are taken at (default: now)");
  return [command, est] { return *command ? estimate(*est) : -1; };
}

}  // namespace sluice::metering
