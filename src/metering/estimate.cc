#include "metering/estimate.h"

#include "metering/decimal.h"

namespace sluice::metering {

namespace {

Error estimate_error(std::string message) {
  return Error(ErrorKind::kBadRequest, std::move(message));
}

Charge price_one(const PriceBook& book, const EstimateInput& in, std::string_view adapter) {
  ChargeInput c;
  c.adapter = adapter;
  c.model = in.model;
  c.operation = "chat";
  c.usage.input_tokens = in.input_tokens;
  c.usage.output_tokens = in.output_tokens;
  c.usage.cache_read_tokens = in.cache_read_tokens;
  c.usage_reported = true;
  c.entered_at_ms = in.at_ms;
  return book.charge(c);
}

}  // namespace

Result<Estimate> estimate_cost(const PriceBook& book, const EstimateInput& in) {
  if (in.cache_read_tokens > in.input_tokens) {
    return estimate_error(
        "--cache-read-tokens is part of --input-tokens and cannot be larger than it");
  }
  Estimate out;
  if (!in.adapter.empty()) {
    out.adapter = in.adapter;
    out.per_call = price_one(book, in, in.adapter);
  } else {
    for (std::string_view kind : kEstimateAdapterKinds) {
      out.adapter = std::string(kind);
      out.per_call = price_one(book, in, kind);
      if (out.per_call.priced) {
        break;
      }
    }
  }
  out.priced = out.per_call.priced;
  if (!out.priced) {
    out.adapter = in.adapter;
    return out;
  }
  std::string why;
  const auto per_call = Decimal::parse(out.per_call.exact_total, 1000, UINT64_MAX, &why);
  if (!per_call) {
    return estimate_error("internal: unreadable per-call amount: " + why);
  }
  const Decimal daily = per_call->times(in.calls_per_day);
  const Decimal monthly = daily.times(kDaysPerMonth);
  const auto daily_micros = daily.round_to(6);
  const auto monthly_micros = monthly.round_to(6);
  if (!daily_micros || !monthly_micros) {
    return estimate_error("the monthly cost of this volume does not fit in 64-bit micro-units");
  }
  out.per_call_exact = per_call->to_string();
  out.daily_exact = daily.to_string();
  out.monthly_exact = monthly.to_string();
  out.daily_micros = *daily_micros;
  out.monthly_micros = *monthly_micros;
  return out;
}

std::string format_estimate(const PriceBook& book, const EstimateInput& in, const Estimate& e) {
  std::string out;
  if (!e.priced) {
    out += "model " + in.model + " is UNACCOUNTED: the catalogue " + std::string(book.describe()) +
           " has no price for it";
    if (in.adapter.empty()) {
      out += " under any adapter kind (tried";
      for (std::string_view kind : kEstimateAdapterKinds) {
        out += " ";
        out += kind;
      }
      out += ")";
    } else {
      out += " under adapter kind " + in.adapter;
    }
    if (!e.per_call.price_version.empty()) {
      out += " in version " + e.per_call.price_version;
    } else {
      out += " (no price version in effect at that time)";
    }
    out +=
        ".\nIts cost would be recorded as unaccounted, not as zero. Add an entry to a catalogue "
        "(docs/metering.md, \"Pricing\") and pass it with --prices FILE.\n";
    return out;
  }
  const std::string& cur = e.per_call.currency;
  out += "model:          " + in.model + " (adapter kind " + e.adapter + ")\n";
  out += "prices:         " + std::string(book.describe()) + "\n";
  out += "price version:  " + e.per_call.price_version + "\n";
  out += "per call:       " + e.per_call_exact + " " + cur;
  if (format_micros(e.per_call.micros) != e.per_call_exact) {
    out += " (recorded per call as " + format_micros(e.per_call.micros) + ", rounded half up)";
  }
  out += "\n";
  out += "per day:        " + e.daily_exact + " " + cur + " (" + std::to_string(in.calls_per_day) +
         (in.calls_per_day == 1 ? " call)\n" : " calls)\n");
  out += "per month:      " + e.monthly_exact + " " + cur + " (" + std::to_string(kDaysPerMonth) +
         " days)\n";
  out += "items per call: " + e.per_call.items_json + "\n";
  return out;
}

}  // namespace sluice::metering
