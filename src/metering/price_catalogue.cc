#include "metering/price_catalogue.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include <yaml-cpp/yaml.h>

#include "config/yaml_field.h"
#include "metering/decimal.h"

namespace sluice::metering {

namespace {

using config::ConfigError;
using config::YamlField;
using config::YamlMap;

constexpr std::uint64_t kMaxRatePerMtok = 100'000;  // currency units per million tokens
constexpr std::uint64_t kMaxPerRequest = 1'000;     // currency units per request
constexpr std::size_t kMaxDiscounts = 4;            // per list (entry, provider, catalogue)
constexpr std::size_t kMaxTiers = 8;
constexpr std::size_t kMaxWindows = 8;

std::uint64_t micros_of(const YamlField& f, std::uint64_t max_units) {
  std::string why;
  auto d = Decimal::parse(f.literal_text(), 6, max_units, &why);
  if (!d) {
    f.fail(why);
  }
  return static_cast<std::uint64_t>(*d->round_to(6));
}

// A percentage with up to 4 decimals, 0..100, in millionths.
std::uint32_t parse_percent(const YamlField& f) {
  std::string why;
  auto p = Decimal::parse(f.literal_text(), 4, 100, &why);
  if (!p) {
    f.fail(why);
  }
  const std::int64_t millionths = *p->round_to(4);
  if (millionths > 1'000'000) {
    f.fail("must be between 0 and 100");
  }
  return static_cast<std::uint32_t>(millionths);
}

Discount parse_discount(const YamlField& f, std::string scope) {
  const YamlMap m = f.map({"name", "percent"});
  Discount d;
  d.name = m.required("name").literal_text();
  if (d.name.empty()) {
    m.required("name").fail("must not be empty");
  }
  d.millionths = parse_percent(m.required("percent"));
  d.scope = std::move(scope);
  return d;
}

std::vector<Discount> parse_discounts(const YamlField& f, const std::string& scope) {
  std::vector<Discount> out;
  const std::vector<YamlField> items = f.items();
  if (items.size() > kMaxDiscounts) {
    f.fail("at most " + std::to_string(kMaxDiscounts) + " discounts per list");
  }
  for (const YamlField& item : items) {
    out.push_back(parse_discount(item, scope));
  }
  return out;
}

// The five rate fields, as they appear in entries and tiers.
void parse_rates(const YamlMap& m, Rates& r) {
  const auto one = [&](std::string_view name, std::optional<std::uint64_t>& out) {
    if (auto f = m.get(name)) {
      out = micros_of(*f, kMaxRatePerMtok);
    }
  };
  one("input", r.input);
  one("output", r.output);
  one("cache_read", r.cache_read);
  one("cache_write", r.cache_write);
  one("reasoning", r.reasoning);
}

std::int32_t parse_clock(const YamlField& f, bool allow_24) {
  const std::string t = f.literal_text();
  const bool shape = t.size() == 5 && t[2] == ':' && std::all_of(t.begin(), t.end(), [](char c) {
                       return (c >= '0' && c <= '9') || c == ':';
                     });
  if (!shape) {
    f.fail("expected a time of day HH:MM, e.g. \"22:00\"");
  }
  const int h = (t[0] - '0') * 10 + (t[1] - '0');
  const int mi = (t[3] - '0') * 10 + (t[4] - '0');
  if (mi > 59 || h > 24 || (h == 24 && (mi != 0 || !allow_24))) {
    f.fail(allow_24 ? "must be between 00:00 and 24:00" : "must be between 00:00 and 23:59");
  }
  return h * 3600 + mi * 60;
}

std::uint8_t parse_days(const YamlField& f) {
  if (!f.is_sequence()) {
    const std::string v = f.literal_text();
    if (v == "all") {
      return 0x7f;
    }
    if (v == "weekdays") {
      return 0x3e;
    }
    if (v == "weekends") {
      return 0x41;
    }
    f.fail("expected all, weekdays, weekends or a list of days (mon, tue, ...)");
  }
  static constexpr std::string_view kNames[] = {"sun", "mon", "tue", "wed", "thu", "fri", "sat"};
  std::uint8_t mask = 0;
  for (const YamlField& item : f.items()) {
    const std::string v = item.literal_text();
    const auto it = std::find(std::begin(kNames), std::end(kNames), v);
    if (it == std::end(kNames)) {
      item.fail("expected one of sun, mon, tue, wed, thu, fri, sat");
    }
    const std::uint8_t bit = static_cast<std::uint8_t>(1u << (it - std::begin(kNames)));
    if ((mask & bit) != 0) {
      item.fail("day listed twice");
    }
    mask |= bit;
  }
  if (mask == 0) {
    f.fail("must list at least one day");
  }
  return mask;
}

Window parse_window(const YamlField& f) {
  const YamlMap m = f.map({"name", "time_zone", "days", "from", "to", "discount_percent"});
  Window w;
  w.name = m.required("name").literal_text();
  const YamlField zone = m.required("time_zone");
  auto tz = TimeZone::load(zone.literal_text());
  if (!tz) {
    zone.fail(tz.error().message());
  }
  w.zone = *tz;
  w.days = m.has("days") ? parse_days(*m.get("days")) : 0x7f;
  w.from_second = parse_clock(m.required("from"), false);
  w.to_second = parse_clock(m.required("to"), true);
  if (w.from_second == w.to_second) {
    m.required("to").fail("must differ from `from` (use 00:00 to 24:00 for a whole day)");
  }
  w.discount.name = w.name;
  w.discount.millionths = parse_percent(m.required("discount_percent"));
  w.discount.scope = "window";
  return w;
}

std::string entry_label(const PriceEntry& e) {
  std::string out;
  if (!e.provider.empty()) {
    out += "provider " + e.provider + ", ";
  }
  if (!e.adapter.empty()) {
    out += "adapter " + e.adapter + ", ";
  }
  out += "model " + e.model + (e.prefix ? "*" : "");
  return out;
}

PriceEntry parse_entry(const YamlField& f) {
  const YamlMap m = f.map({"adapter", "provider", "model", "match", "kind", "currency", "input",
                           "output", "cache_read", "cache_write", "reasoning", "per_request",
                           "tiers", "windows", "discounts", "source", "note"});
  PriceEntry e;
  if (auto a = m.get("adapter")) {
    e.adapter = a->literal_text();
  }
  if (auto p = m.get("provider")) {
    e.provider = p->literal_text();
  }
  if (e.adapter.empty() && e.provider.empty()) {
    f.fail("an entry names an adapter kind, a provider id, or both");
  }
  e.model = m.required("model").literal_text();
  if (e.model.empty()) {
    m.required("model").fail("must not be empty");
  }
  if (auto match = m.get("match")) {
    const std::string v = match->literal_text();
    if (v != "exact" && v != "prefix") {
      match->fail("expected exact or prefix");
    }
    e.prefix = v == "prefix";
  }
  if (auto kind = m.get("kind")) {
    const std::string v = kind->literal_text();
    if (v != "chat" && v != "embeddings") {
      kind->fail("expected chat or embeddings");
    }
    e.embeddings = v == "embeddings";
  }
  if (auto currency = m.get("currency")) {
    e.currency = currency->literal_text();
    if (e.currency.size() != 3 || !std::all_of(e.currency.begin(), e.currency.end(),
                                               [](char c) { return c >= 'A' && c <= 'Z'; })) {
      currency->fail("expected an ISO 4217 code such as USD or EUR");
    }
  }
  parse_rates(m, e.rates);
  if (!e.rates.input) {
    f.fail_as(f.child_path("input"), "missing required field input (0 for a free model)");
  }
  if (e.embeddings) {
    for (std::string_view name : {"output", "cache_read", "cache_write", "reasoning", "tiers"}) {
      if (auto extra = m.get(name)) {
        extra->fail("an embeddings entry is priced on input tokens only");
      }
    }
  } else if (!e.rates.output) {
    f.fail_as(f.child_path("output"), "missing required field output (0 for a free model)");
  }
  if (auto fee = m.get("per_request")) {
    e.per_request_micros = micros_of(*fee, kMaxPerRequest);
  }
  if (auto tiers = m.get("tiers")) {
    const std::vector<YamlField> items = tiers->items();
    if (items.size() > kMaxTiers) {
      tiers->fail("at most " + std::to_string(kMaxTiers) + " tiers");
    }
    for (const YamlField& item : items) {
      const YamlMap t = item.map(
          {"above_input_tokens", "input", "output", "cache_read", "cache_write", "reasoning"});
      Tier tier;
      const YamlField above = t.required("above_input_tokens");
      tier.above_input_tokens = above.unsigned_in(0, UINT64_MAX - 1);
      if (!e.tiers.empty() && tier.above_input_tokens <= e.tiers.back().above_input_tokens) {
        above.fail("tiers must be listed by ascending threshold");
      }
      parse_rates(t, tier.rates);
      if (!tier.rates.input && !tier.rates.output && !tier.rates.cache_read &&
          !tier.rates.cache_write && !tier.rates.reasoning) {
        item.fail("a tier lists at least one rate");
      }
      if (tier.rates.reasoning && !e.rates.reasoning) {
        item.fail("a tier may set a reasoning rate only when the entry has one");
      }
      e.tiers.push_back(tier);
    }
  }
  if (auto windows = m.get("windows")) {
    const std::vector<YamlField> items = windows->items();
    if (items.size() > kMaxWindows) {
      windows->fail("at most " + std::to_string(kMaxWindows) + " windows");
    }
    for (const YamlField& item : items) {
      e.windows.push_back(parse_window(item));
    }
  }
  if (auto discounts = m.get("discounts")) {
    e.discounts = parse_discounts(*discounts, "entry");
  }
  e.label = entry_label(e);
  return e;
}

void index_entry(PriceVersion& v, std::uint32_t i) {
  const PriceEntry& e = v.entries[i];
  ScopeIndex& scope = e.provider.empty() ? v.by_adapter[e.adapter] : v.by_provider[e.provider];
  if (e.prefix) {
    scope.prefixes.emplace_back(e.model, i);
  } else {
    scope.exact[e.model].push_back(i);
  }
}

PriceVersion parse_version(const YamlField& f) {
  const YamlMap m =
      f.map({"id", "effective_from", "prices", "discounts", "provider_discounts", "note"});
  PriceVersion v;
  v.id = m.required("id").literal_text();
  if (v.id.empty()) {
    m.required("id").fail("must not be empty");
  }
  const YamlField from = m.required("effective_from");
  auto ms = parse_rfc3339_ms(from.literal_text());
  if (!ms) {
    from.fail(ms.error().message());
  }
  v.effective_from_ms = *ms;
  if (auto d = m.get("discounts")) {
    v.discounts = parse_discounts(*d, "catalogue");
  }
  if (auto pd = m.get("provider_discounts")) {
    for (const auto& [key, value] : pd->entries()) {
      v.provider_discounts[key.literal_text()] = parse_discounts(value, "provider");
    }
  }
  const YamlField prices = m.required("prices");
  // (provider, adapter, model, prefix) -> line, to report a repeated entry at both places.
  std::map<std::tuple<std::string, std::string, std::string, bool>, int> seen;
  for (const YamlField& item : prices.items()) {
    PriceEntry e = parse_entry(item);
    auto [it, inserted] =
        seen.emplace(std::make_tuple(e.provider, e.adapter, e.model, e.prefix), item.line());
    if (!inserted) {
      item.fail("repeats the entry at line " + std::to_string(it->second) + " (" + e.label + ")");
    }
    v.entries.push_back(std::move(e));
  }
  for (std::uint32_t i = 0; i < v.entries.size(); ++i) {
    index_entry(v, i);
  }
  const auto longest_first = [](const auto& a, const auto& b) {
    return a.first.size() > b.first.size();
  };
  for (auto* scopes : {&v.by_provider, &v.by_adapter}) {
    for (auto& [name, scope] : *scopes) {
      std::stable_sort(scope.prefixes.begin(), scope.prefixes.end(), longest_first);
    }
  }
  return v;
}

Error catalogue_error(std::string message) {
  return Error(ErrorKind::kBadRequest, std::move(message));
}

std::string location(std::string_view source, const YAML::Mark& mark) {
  const int line = mark.is_null() ? 1 : std::max(mark.line, 0) + 1;
  const int column = mark.is_null() ? 1 : std::max(mark.column, 0) + 1;
  return std::string(source) + ":" + std::to_string(line) + ":" + std::to_string(column) + ": ";
}

}  // namespace

bool Window::contains(const LocalTime& t) const {
  std::uint8_t weekday = t.weekday;
  if (from_second < to_second) {
    if (t.second_of_day < from_second || t.second_of_day >= to_second) {
      return false;
    }
  } else if (t.second_of_day < to_second) {
    weekday = static_cast<std::uint8_t>((weekday + 6) % 7);  // opened the day before
  } else if (t.second_of_day < from_second) {
    return false;
  }
  return (days & (1u << weekday)) != 0;
}

const PriceEntry* PriceVersion::find(std::string_view provider, std::string_view adapter,
                                     std::string_view model) const {
  const auto in_scope = [&](const StringMap<ScopeIndex>& scopes,
                            std::string_view key) -> const PriceEntry* {
    const auto scope = scopes.find(key);
    if (scope == scopes.end()) {
      return nullptr;
    }
    const auto fits = [&](std::uint32_t i) {
      return entries[i].adapter.empty() || entries[i].adapter == adapter;
    };
    if (const auto exact = scope->second.exact.find(model); exact != scope->second.exact.end()) {
      for (std::uint32_t i : exact->second) {
        if (fits(i)) {
          return &entries[i];
        }
      }
    }
    for (const auto& [prefix, i] : scope->second.prefixes) {
      if (model.starts_with(prefix) && fits(i)) {
        return &entries[i];
      }
    }
    return nullptr;
  };
  if (!provider.empty()) {
    if (const PriceEntry* e = in_scope(by_provider, provider)) {
      return e;
    }
  }
  return adapter.empty() ? nullptr : in_scope(by_adapter, adapter);
}

const PriceVersion* PriceCatalogue::version_at(std::int64_t unix_ms) const {
  const auto it = std::upper_bound(
      versions.begin(), versions.end(), unix_ms,
      [](std::int64_t t, const PriceVersion& v) { return t < v.effective_from_ms; });
  return it == versions.begin() ? nullptr : &*(it - 1);
}

std::string PriceCatalogue::summary() const {
  std::string out = description + "\n";
  for (const PriceVersion& v : versions) {
    out += "  version " + v.id + " from " + format_rfc3339_ms(v.effective_from_ms) + ": " +
           std::to_string(v.entries.size()) +
           (v.entries.size() == 1 ? " price entry\n" : " price entries\n");
  }
  return out;
}

Result<PriceCatalogue> parse_price_catalogue(std::string_view yaml_text, std::string_view source) {
  config::LoadContext context;
  context.source_name = std::string(source);
  context.getenv = [](const std::string&) -> std::optional<std::string> { return std::nullopt; };
  try {
    const YAML::Node root = YAML::Load(std::string(yaml_text));
    if (!root.IsMap()) {
      return catalogue_error(location(source, root.Mark()) +
                             "expected a mapping with catalogue, date and versions");
    }
    const YamlMap m = YamlField::root(root, context).map({"catalogue", "date", "versions"});
    PriceCatalogue out;
    out.label = m.required("catalogue").literal_text();
    const YamlField date = m.required("date");
    out.date = date.literal_text();
    if (out.date.size() != 10 || !parse_rfc3339_ms(out.date + "T00:00:00Z")) {
      date.fail("expected a date YYYY-MM-DD");
    }
    const YamlField versions = m.required("versions");
    std::set<std::string> ids;
    for (const YamlField& item : versions.items()) {
      PriceVersion v = parse_version(item);
      if (!ids.insert(v.id).second) {
        item.fail("version id \"" + v.id + "\" is used twice");
      }
      if (!out.versions.empty() && v.effective_from_ms <= out.versions.back().effective_from_ms) {
        item.fail("versions must be listed by strictly ascending effective_from");
      }
      out.versions.push_back(std::move(v));
    }
    if (out.versions.empty()) {
      versions.fail("at least one version is required");
    }
    out.description = out.label + " (" + out.date + "; " + std::to_string(out.versions.size()) +
                      (out.versions.size() == 1 ? " version, latest " : " versions, latest ") +
                      out.versions.back().id + ")";
    return out;
  } catch (const ConfigError& e) {
    return catalogue_error(e.what());
  } catch (const YAML::Exception& e) {
    return catalogue_error(location(source, e.mark) + "invalid YAML: " + e.msg);
  }
}

}  // namespace sluice::metering
