#pragma once

#include <cstdint>
#include <optional>

#include "config/state.h"
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
  // A Redis shared by every instance: answers kept there too, and a call under way claims its
  // key there, so a retry that reaches another instance neither pays twice nor waits on a call
  // it cannot see (it is told to retry: 409). Without it, each instance keeps its own. Read at
  // start.
  std::optional<StateSettings> redis;
  std::uint64_t compress_above_bytes = 4096;  // records larger than this are deflated in Redis
};

// `idempotency:` at the top of the config (`true` or a mapping; a mapping turns it on unless
// it says `enabled: false`). Throws ConfigError.
IdempotencySettings load_idempotency(const YamlField& field);

}  // namespace sluice::config
