#include "config/idempotency.h"

#include "config/loader.h"

namespace sluice::config {

IdempotencySettings load_idempotency(const YamlField& field) {
  IdempotencySettings s;
  if (!field.is_map()) {
    s.enabled = field.boolean();
    return s;
  }
  const YamlMap m = field.map({"enabled", "ttl_ms", "memory_bytes", "max_entry_bytes", "redis"});
  s.enabled = true;
  if (auto f = m.get("enabled")) {
    s.enabled = f->boolean();
  }
  if (auto f = m.get("ttl_ms")) {
    s.ttl = f->millis_in(1000, 7 * kMaxMillis);
  }
  if (auto f = m.get("memory_bytes")) {
    s.memory_bytes = f->size_in(1024 * 1024, std::uint64_t{1} << 40);
  }
  if (auto f = m.get("max_entry_bytes")) {
    s.max_entry_bytes = f->size_in(1024, 64 * 1024 * 1024);
  }
  if (auto f = m.get("redis")) {
    s.redis = load_redis(*f, RedisUse::kCache);
    s.redis->key_prefix += "idem:";
  }
  return s;
}

}  // namespace sluice::config
