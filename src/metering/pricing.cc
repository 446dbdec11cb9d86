#include "metering/pricing.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstdlib>

#include "metering/decimal.h"
#include "metering/default_prices.h"
#include "metering/price_catalogue.h"

namespace sluice::metering {

namespace {

// Appends `s` as a JSON string (model and provider names come from config and upstreams).
void append_json_string(std::string& out, std::string_view s) {
  out += '"';
  for (const char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof(buf), "\\u%04x", static_cast<unsigned>(c));
          out += buf;
        } else {
          out += c;
        }
    }
  }
  out += '"';
}

void append_uint(std::string& out, std::uint64_t v) {
  char buf[24];
  const auto r = std::to_chars(buf, buf + sizeof(buf), v);
  out.append(buf, r.ptr);
}

void append_json_decimal(std::string& out, const Decimal& d) {
  out += '"';
  d.append_to(out);
  out += '"';
}

// `"key":` with a leading comma.
void key(std::string& out, std::string_view k) {
  out += ",\"";
  out += k;
  out += "\":";
}

Charge unaccounted(std::string_view reason, const ChargeInput& in, std::string_view version) {
  Charge c;
  c.price_version = std::string(version);
  c.items_json.reserve(160);
  c.items_json += "{\"unaccounted\":";
  append_json_string(c.items_json, reason);
  if (!version.empty()) {
    key(c.items_json, "version");
    append_json_string(c.items_json, version);
  }
  key(c.items_json, "provider");
  append_json_string(c.items_json, in.provider);
  key(c.items_json, "adapter");
  append_json_string(c.items_json, in.adapter);
  key(c.items_json, "model");
  append_json_string(c.items_json, in.model);
  c.items_json += '}';
  return c;
}

class CataloguePriceBook final : public PriceBook {
 public:
  explicit CataloguePriceBook(PriceCatalogue catalogue) : catalogue_(std::move(catalogue)) {}

  std::string_view describe() const override { return catalogue_.description; }

  Charge charge(const ChargeInput& in) const override {
    if (!in.usage_reported) {
      return unaccounted("usage_not_reported", in, "");
    }
    const PriceVersion* version = catalogue_.version_at(in.entered_at_ms);
    if (version == nullptr) {
      return unaccounted("no_price_version_in_effect", in, "");
    }
    const PriceEntry* entry = version->find(in.provider, in.adapter, in.model);
    if (entry == nullptr) {
      return unaccounted("model_not_in_catalogue", in, version->id);
    }
    return price(in, *version, *entry);
  }

 private:
  static Charge price(const ChargeInput& in, const PriceVersion& version, const PriceEntry& entry);

  PriceCatalogue catalogue_;
};

// One priced usage item.
struct ItemWriter {
  std::string& out;
  Decimal subtotal;
  bool first = true;

  void add(std::string_view name, std::uint64_t tokens, std::uint64_t rate_micros,
           std::string_view rule) {
    const Decimal amount = Decimal::from_integer(tokens).times(rate_micros, 12);
    subtotal = subtotal + amount;
    out += first ? "{\"name\":" : ",{\"name\":";
    first = false;
    append_json_string(out, name);
    key(out, "tokens");
    append_uint(out, tokens);
    key(out, "rate");
    append_json_decimal(out, Decimal(rate_micros, 6));
    key(out, "amount");
    append_json_decimal(out, amount);
    key(out, "rule");
    append_json_string(out, rule);
    out += '}';
  }
};

Charge CataloguePriceBook::price(const ChargeInput& in, const PriceVersion& version,
                                 const PriceEntry& entry) {
  Charge c;
  c.priced = true;
  c.price_version = version.id;
  c.currency = entry.currency;
  std::string& out = c.items_json;
  out.reserve(768);

  // Rates: the entry's, replaced by those the highest tier exceeded lists.
  Rates rates = entry.rates;
  const Tier* tier = nullptr;
  for (const Tier& t : entry.tiers) {
    if (in.usage.input_tokens > t.above_input_tokens) {
      tier = &t;
    }
  }
  std::string tier_rule;
  if (tier != nullptr) {
    tier_rule = "tier:input>" + std::to_string(tier->above_input_tokens);
  }
  const auto pick = [&](std::optional<std::uint64_t> Rates::*field) -> std::string_view {
    if (tier != nullptr && (tier->rates.*field).has_value()) {
      rates.*field = tier->rates.*field;
      return tier_rule;
    }
    return "base";
  };
  const std::string_view input_rule = pick(&Rates::input);
  const std::string_view output_rule = pick(&Rates::output);
  const std::string_view cache_read_rule = pick(&Rates::cache_read);
  const std::string_view cache_write_rule = pick(&Rates::cache_write);
  const std::string_view reasoning_rule = pick(&Rates::reasoning);

  const Window* window = nullptr;
  for (const Window& w : entry.windows) {
    if (w.contains(w.zone.local(in.entered_at_ms))) {
      window = &w;
      break;
    }
  }

  out += "{\"version\":";
  append_json_string(out, version.id);
  key(out, "entry");
  append_json_string(out, entry.label);
  key(out, "currency");
  append_json_string(out, entry.currency);
  if (tier != nullptr) {
    key(out, "tier");
    append_json_string(out, tier_rule);
  }
  if (window != nullptr) {
    key(out, "window");
    append_json_string(out, window->name);
  }
  key(out, "items");
  out += '[';

  const ir::Usage& u = in.usage;
  std::string_view anomalies[4];
  std::size_t anomaly_count = 0;
  ItemWriter items{out, Decimal()};
  if (entry.embeddings) {
    items.add("input", u.input_tokens, *rates.input, input_rule);
    if (u.output_tokens > 0) {
      anomalies[anomaly_count++] = "output_tokens_on_embeddings_not_charged";
    }
  } else {
    const std::uint64_t cached = u.cache_read_tokens + u.cache_write_tokens;
    std::uint64_t uncached = 0;
    if (cached > u.input_tokens || cached < u.cache_read_tokens) {
      anomalies[anomaly_count++] = "cache_tokens_exceed_input";
    } else {
      uncached = u.input_tokens - cached;
    }
    items.add("input", uncached, *rates.input, input_rule);
    if (u.cache_read_tokens > 0) {
      if (rates.cache_read) {
        items.add("cache_read", u.cache_read_tokens, *rates.cache_read, cache_read_rule);
      } else {
        items.add("cache_read", u.cache_read_tokens, *rates.input, "input_rate:no_cache_read_rate");
      }
    }
    if (u.cache_write_tokens > 0) {
      if (rates.cache_write) {
        items.add("cache_write", u.cache_write_tokens, *rates.cache_write, cache_write_rule);
      } else {
        items.add("cache_write", u.cache_write_tokens, *rates.input,
                  "input_rate:no_cache_write_rate");
      }
    }
    if (rates.reasoning) {
      std::uint64_t plain = 0;
      if (u.reasoning_tokens > u.output_tokens) {
        anomalies[anomaly_count++] = "reasoning_tokens_exceed_output";
      } else {
        plain = u.output_tokens - u.reasoning_tokens;
      }
      items.add("output", plain, *rates.output, output_rule);
      if (u.reasoning_tokens > 0) {
        items.add("reasoning", u.reasoning_tokens, *rates.reasoning, reasoning_rule);
      }
    } else {
      // Reasoning tokens are part of output_tokens and paid at the output rate.
      if (u.reasoning_tokens > 0) {
        items.add("output", u.output_tokens, *rates.output,
                  std::string(output_rule) + ":includes_reasoning");
      } else {
        items.add("output", u.output_tokens, *rates.output, output_rule);
      }
    }
  }
  if (entry.per_request_micros > 0) {
    const Decimal fee(entry.per_request_micros, 6);
    items.subtotal = items.subtotal + fee;
    out += ",{\"name\":\"per_request\",\"amount\":";
    append_json_decimal(out, fee);
    out += ",\"rule\":\"base\"}";
  }
  out += ']';
  key(out, "subtotal");
  append_json_decimal(out, items.subtotal);

  // Discounts, layered multiplicatively in this order: window, entry, provider, catalogue.
  Decimal total = items.subtotal;
  bool any_discount = false;
  const auto apply = [&](const Discount& d) {
    total = total.times(1'000'000 - d.millionths, 6);
    out += any_discount ? ",{\"name\":" : ",\"discounts\":[{\"name\":";
    any_discount = true;
    append_json_string(out, d.name);
    key(out, "scope");
    append_json_string(out, d.scope);
    key(out, "percent");
    append_json_decimal(out, Decimal(d.millionths, 4));
    key(out, "total_after");
    append_json_decimal(out, total);
    out += '}';
  };
  if (window != nullptr) {
    apply(window->discount);
  }
  for (const Discount& d : entry.discounts) {
    apply(d);
  }
  if (const auto it = version.provider_discounts.find(in.provider);
      it != version.provider_discounts.end()) {
    for (const Discount& d : it->second) {
      apply(d);
    }
  }
  for (const Discount& d : version.discounts) {
    apply(d);
  }
  if (any_discount) {
    out += ']';
  }
  c.exact_total = total.to_string();
  key(out, "total");
  append_json_string(out, c.exact_total);
  const std::optional<std::int64_t> micros = total.round_to(6);
  if (!micros) {
    anomalies[anomaly_count++] = "amount_overflow";
  }
  c.micros = micros.value_or(INT64_MAX);
  key(out, "micros");
  append_uint(out, static_cast<std::uint64_t>(c.micros));
  out += ",\"rounding\":\"half_up\"";
  if (anomaly_count > 0) {
    key(out, "anomalies");
    out += '[';
    for (std::size_t i = 0; i < anomaly_count; ++i) {
      if (i > 0) {
        out += ',';
      }
      append_json_string(out, anomalies[i]);
    }
    out += ']';
  }
  out += '}';
  return c;
}

}  // namespace

Charge share_of(const Charge& full, unsigned percent) {
  Charge c;
  c.priced = full.priced;
  c.price_version = full.price_version;
  c.currency = full.currency;
  c.items_json.reserve(full.items_json.size() + 32);
  c.items_json += "{\"share_percent\":";
  append_uint(c.items_json, percent);
  key(c.items_json, "of");
  c.items_json += full.items_json.empty() ? std::string_view("null") : full.items_json;
  c.items_json += '}';
  if (!full.priced) {
    return c;
  }
  // The catalogue wrote exact_total itself; a total it cannot read again is no share at all.
  const std::optional<Decimal> total = Decimal::parse(full.exact_total, 64, UINT64_MAX, nullptr);
  if (!total) {
    c.priced = false;
    return c;
  }
  const Decimal share = total->times(std::min(percent, 100U), 2);
  c.exact_total = share.to_string();
  c.micros = share.round_to(6).value_or(INT64_MAX);
  return c;
}

Result<std::shared_ptr<const PriceBook>> load_price_book(std::string_view yaml_text,
                                                         std::string_view source) {
  auto catalogue = parse_price_catalogue(yaml_text, source);
  if (!catalogue) {
    return catalogue.error();
  }
  return std::shared_ptr<const PriceBook>(
      std::make_shared<CataloguePriceBook>(std::move(*catalogue)));
}

std::shared_ptr<const PriceBook> default_price_book() {
  static const std::shared_ptr<const PriceBook> book = [] {
    auto loaded = load_price_book(default_prices_yaml(), "prices/default.yaml");
    if (!loaded) {
      // Unit tests load the embedded file; reaching this is a build that skipped them.
      std::fprintf(stderr, "fatal: built-in price catalogue is invalid: %s\n",
                   loaded.error().message().c_str());
      std::abort();
    }
    return *loaded;
  }();
  return book;
}

}  // namespace sluice::metering
