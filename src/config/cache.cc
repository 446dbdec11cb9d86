#include "config/cache.h"

#include <iterator>
#include <span>
#include <string_view>

#include "config/loader.h"
#include "config/scalars.h"

namespace sluice::config {
namespace {

constexpr std::string_view kRouteFields[] = {
    "enabled",         "ttl_ms",   "ttl_jitter",           "stale_while_revalidate_ms",
    "max_entry_bytes", "scope",    "vary_headers",         "store_truncated",
    "bill_percent",    "semantic", "shared_flight_wait_ms"};

CacheSettings::Scope load_scope(const YamlField& field) {
  const std::string scope = field.text();
  if (scope == "key_group") {
    return CacheSettings::Scope::kKeyGroup;
  }
  if (scope == "key") {
    return CacheSettings::Scope::kKey;
  }
  if (scope == "shared") {
    return CacheSettings::Scope::kShared;
  }
  field.fail("expected \"key_group\", \"key\" or \"shared\", got " + in_quotes(scope));
}

double load_jitter(const YamlField& field) {
  // A share in percent steps is all anyone needs; an integer keeps the scalar strict.
  const std::uint64_t percent = field.unsigned_in(0, 50);
  return static_cast<double>(percent) / 100.0;
}

std::vector<std::string> load_vary(const YamlField& field) {
  std::vector<std::string> names;
  for (const YamlField& item : field.one_or_many()) {
    std::string name = item.text();
    for (char& c : name) {
      c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
    }
    if (!is_header_name(name)) {
      item.fail("expected a header name");
    }
    if (name == "authorization" || name == "x-api-key" || name == "api-key" ||
        name == "x-goog-api-key" || name == "cookie") {
      item.fail("a credential header cannot be part of a cache key (use scope: key instead)");
    }
    names.push_back(std::move(name));
  }
  return names;
}

SemanticSettings load_semantic(const YamlField& field) {
  const YamlMap m = field.map(
      {"embeddings", "threshold", "max_turns", "timeout_ms", "max_text_bytes", "dimensions"});
  SemanticSettings s;
  s.source = field.where();
  s.embeddings = m.required("embeddings").text();
  if (auto f = m.get("threshold")) {
    s.threshold = ratio(*f, 0.5, 1.0);
  }
  if (auto f = m.get("max_turns")) {
    s.max_turns = static_cast<std::uint32_t>(f->unsigned_in(1, 64));
  }
  if (auto f = m.get("timeout_ms")) {
    s.timeout = f->millis_in(10, 60'000);
  }
  if (auto f = m.get("max_text_bytes")) {
    s.max_text_bytes = f->size_in(16, 1024 * 1024);
  }
  if (auto f = m.get("dimensions")) {
    s.dimensions = static_cast<std::uint32_t>(f->unsigned_in(1, 65536));
  }
  return s;
}

void load_fields(const YamlMap& m, CacheSettings& s) {
  if (auto f = m.get("enabled")) {
    s.enabled = f->boolean();
  }
  if (auto f = m.get("ttl_ms")) {
    s.ttl = f->millis_in(1000, 30 * kMaxMillis);
  }
  if (auto f = m.get("ttl_jitter")) {
    s.ttl_jitter = load_jitter(*f);
  }
  if (auto f = m.get("stale_while_revalidate_ms")) {
    s.stale_while_revalidate = f->millis_in(0, kMaxMillis);
  }
  if (auto f = m.get("max_entry_bytes")) {
    s.max_entry_bytes = f->size_in(1024, 64 * 1024 * 1024);
  }
  if (auto f = m.get("scope")) {
    s.scope = load_scope(*f);
  }
  if (auto f = m.get("vary_headers")) {
    s.vary_headers = load_vary(*f);
  }
  if (auto f = m.get("store_truncated")) {
    s.store_truncated = f->boolean();
  }
  if (auto f = m.get("bill_percent")) {
    s.bill_percent = static_cast<std::uint8_t>(f->unsigned_in(0, 100));
  }
  if (auto f = m.get("shared_flight_wait_ms")) {
    s.shared_flight_wait = f->millis_in(0, kMaxMillis);
  }
  if (auto f = m.get("semantic")) {
    if (f->is_map()) {
      s.semantic = load_semantic(*f);
    } else if (f->boolean()) {
      f->fail("semantic needs a mapping with at least `embeddings: <embeddings route alias>`");
    } else {
      s.semantic.reset();
    }
  }
}

}  // namespace

CacheConfig load_cache(const YamlField& field) {
  std::vector<std::string_view> known(std::begin(kRouteFields), std::end(kRouteFields));
  known.push_back("memory_bytes");
  known.push_back("redis");
  known.push_back("compress_above_bytes");
  known.push_back("semantic_memory_bytes");
  const YamlMap m = field.map(std::span<const std::string_view>(known));
  CacheConfig config;
  if (auto f = m.get("memory_bytes")) {
    config.memory_bytes = f->size_in(1024 * 1024, std::uint64_t{1} << 40);
  }
  if (auto f = m.get("redis")) {
    config.redis = load_redis(*f, RedisUse::kCache);
    config.redis->key_prefix += "cache:";
  }
  if (auto f = m.get("compress_above_bytes")) {
    config.compress_above_bytes = f->size_in(0, std::uint64_t{1} << 30);
  }
  if (auto f = m.get("semantic_memory_bytes")) {
    config.semantic_memory_bytes = f->size_in(1024 * 1024, std::uint64_t{1} << 40);
  }
  load_fields(m, config.defaults);
  return config;
}

CacheSettings load_route_cache(const YamlField& field, const CacheSettings& defaults) {
  CacheSettings s = defaults;
  if (!field.is_map()) {
    s.enabled = field.boolean();
    return s;
  }
  // A map turns the cache on unless it says `enabled: false`.
  s.enabled = true;
  load_fields(field.map(std::span<const std::string_view>(kRouteFields)), s);
  return s;
}

}  // namespace sluice::config
