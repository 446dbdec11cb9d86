#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/result.h"
#include "core/time_zone.h"

// The compiled form of a price catalogue (docs/metering.md, "Pricing"): what the YAML says,
// validated and indexed for the request path. Built once by parse_price_catalogue(), then
// read-only. Amounts are integers: rates in micro-units of the currency per million tokens
// (1 USD / Mtok = 1'000'000), fees in micro-units, percentages in millionths (10% = 100'000).
namespace sluice::metering {

struct StringHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};
template <class V>
using StringMap = std::unordered_map<std::string, V, StringHash, std::equal_to<>>;

// Per-million-token rates; nullopt = not listed.
struct Rates {
  std::optional<std::uint64_t> input, output, cache_read, cache_write, reasoning;
};

struct Discount {
  std::string name;
  std::uint32_t millionths = 0;  // of the amount taken off; 1'000'000 = 100%
  std::string scope;             // "window", "entry", "provider" or "catalogue"
};

// Replaces the listed rates for the whole request when input tokens are strictly above the
// threshold.
struct Tier {
  std::uint64_t above_input_tokens = 0;
  Rates rates;
};

// A time-of-day window, decided by the local time the request entered. `from` is inclusive,
// `to` exclusive; from > to wraps past midnight, and the part after midnight belongs to the
// day the window opened (so `days` is about that day).
struct Window {
  std::string name;
  TimeZone zone;
  std::uint8_t days = 0x7f;  // bit 0 = Sunday .. bit 6 = Saturday
  std::int32_t from_second = 0;
  std::int32_t to_second = 0;
  Discount discount;

  bool contains(const LocalTime& t) const;
};

struct PriceEntry {
  std::string label;  // "adapter openai, model gpt-4.1", for items and messages
  std::string adapter, provider, model;
  bool prefix = false;
  bool embeddings = false;
  std::string currency = "USD";
  Rates rates;
  std::uint64_t per_request_micros = 0;
  std::vector<Tier> tiers;  // ascending thresholds
  std::vector<Window> windows;
  std::vector<Discount> discounts;
};

// Entries that one scope (a provider id or an adapter kind) prices, by model name.
struct ScopeIndex {
  StringMap<std::vector<std::uint32_t>> exact;
  std::vector<std::pair<std::string, std::uint32_t>> prefixes;  // longest first
};

struct PriceVersion {
  std::string id;
  std::int64_t effective_from_ms = 0;
  std::vector<PriceEntry> entries;
  std::vector<Discount> discounts;  // catalogue-wide, applied last
  StringMap<std::vector<Discount>> provider_discounts;
  StringMap<ScopeIndex> by_provider;
  StringMap<ScopeIndex> by_adapter;

  // The entry pricing `model` for this provider id and adapter kind, or nullptr: entries
  // naming the provider first, then those naming the adapter kind; in each, an exact model
  // name before the longest matching prefix.
  const PriceEntry* find(std::string_view provider, std::string_view adapter,
                         std::string_view model) const;
};

struct PriceCatalogue {
  std::string label;
  std::string date;
  std::string description;             // for PriceBook::describe()
  std::vector<PriceVersion> versions;  // ascending effective_from

  // The version in effect at `unix_ms`, or nullptr before the first one.
  const PriceVersion* version_at(std::int64_t unix_ms) const;
  // The description, then one line per version: id, effective_from, number of entries.
  std::string summary() const;
};

// Parses and validates a catalogue; errors read "<source>:<line>:<col>: <field>: <problem>".
// Reads IANA time-zone files for windows (start-up only).
Result<PriceCatalogue> parse_price_catalogue(std::string_view yaml_text, std::string_view source);

}  // namespace sluice::metering
