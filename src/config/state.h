#pragma once

#include <cstdint>
#include <string>

#include "config/values.h"

namespace sluice::config {

class YamlField;

// Where limiter state lives: in this process (each instance enforces its own limits) or in a
// Redis shared by every instance (limits hold across replicas).
struct StateSettings {
  enum class Backend : std::uint8_t { kLocal, kRedis };
  // What a request gets when Redis does not answer within the timeout (down, slow, refused):
  // admitted (rate limits: a short burst of overspend beats an outage) or refused with 503.
  enum class OnError : std::uint8_t { kFailOpen, kFailClosed };
  Backend backend = Backend::kLocal;
  std::string redis_url;  // kRedis: redis://[:password@]host[:port][/db]; never logged
  std::string redis_host;
  std::uint16_t redis_port = 6379;
  std::string redis_password;  // may be empty
  std::uint32_t redis_db = 0;
  Millis timeout{20};  // the longest a request waits for Redis
  OnError on_error = OnError::kFailOpen;
  std::string key_prefix = "sluice:";  // every Redis key starts with it
};

// `state:` (`{ backend: local }` or `{ redis: { url, timeout_ms, on_error, key_prefix } }`).
// Throws ConfigError; messages never show the URL.
StateSettings load_state(const YamlField& field);

// Who a `redis:` section is for: the limiter's takes `on_error`; the cache's and idempotency's
// do not (a cache that does not answer is a miss, never a refusal).
enum class RedisUse : std::uint8_t { kLimits, kCache };
// A `redis: { url, timeout_ms, key_prefix[, on_error] }` section. Throws ConfigError; messages
// never show the URL.
StateSettings load_redis(const YamlField& redis, RedisUse use);

}  // namespace sluice::config
