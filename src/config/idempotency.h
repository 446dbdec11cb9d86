#pragma once

#include <cstdint>

#include "config/values.h"

namespace sluice::config {

class YamlField;

// `Idempotency-Key` on model calls (docs/cache.md#idempotency): a retry with the same key and
// the same request joins the call under way or gets its answer again, instead of paying twice.
struct IdempotencySettings {
  bool enabled = false;
  Millis ttl{86'400'000};  // how long a completed answer is kept for retries
  // Memory the kept answers may hold in process; beyond it the oldest unused go first.
  std::uint64_t memory_bytes = 64 * 1024 * 1024;
  std::uint64_t max_entry_bytes = 1024 * 1024;  // larger answers are not kept
};

// `idempotency:` at the top of the config (`true` or a mapping; a mapping turns it on unless
// it says `enabled: false`). Throws ConfigError.
IdempotencySettings load_idempotency(const YamlField& field);

}  // namespace sluice::config
