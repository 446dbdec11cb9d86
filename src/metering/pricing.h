#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "core/result.h"
#include "ir/usage.h"

namespace sluice::metering {

// What a finished model call is charged for.
struct ChargeInput {
  std::string_view provider;   // provider id as configured (catalogue entries name the
  std::string_view adapter;    // adapter kind, e.g. "openai", and the upstream model)
  std::string_view model;      // model actually used upstream
  std::string_view operation;  // "chat", "embeddings", ...
  ir::Usage usage;
  bool usage_reported = false;
  // When the request entered the gateway (unix ms). Fixes the price version and the
  // time-of-day window: a request entering before a price change pays the old price.
  std::int64_t entered_at_ms = 0;
};

// The cost of one call. priced=false is "unaccounted": the catalogue has no price for this
// model at that time; micros is then 0 and must not be read as free.
struct Charge {
  bool priced = false;
  std::string price_version;  // catalogue version id used
  std::string currency = "USD";
  std::int64_t micros = 0;  // millionths of the currency unit, rounded once at the end
  std::string items_json;   // every usage item and rule applied, with its rate and amount
  // The total before rounding, as an exact decimal ("0.0000125"); empty when unaccounted.
  // `sluice estimate` multiplies it by a call volume without rounding each call.
  std::string exact_total;
};

// An immutable, versioned price catalogue (prices/default.yaml, or metering.prices). Shared by
// all workers; charge() is pure and allocation-light.
class PriceBook {
 public:
  virtual ~PriceBook() = default;
  virtual Charge charge(const ChargeInput& input) const = 0;
  // The catalogue's own version label and date, for /readyz and logs.
  virtual std::string_view describe() const = 0;
};

// `percent` of `full`, for an answer served again (a cache hit, a cache follower) that its
// route bills at a share of what the paid call cost: the same price version and currency, the
// exact total scaled and rounded once, the items kept under {"share_percent":P,"of":...}. An
// unpriced `full` stays unpriced.
Charge share_of(const Charge& full, unsigned percent);

// Parses a catalogue (YAML text); `source` names it in errors ("file:line:col: ...").
Result<std::shared_ptr<const PriceBook>> load_price_book(std::string_view yaml_text,
                                                         std::string_view source);
// The catalogue compiled into the binary (prices/default.yaml).
std::shared_ptr<const PriceBook> default_price_book();

}  // namespace sluice::metering
