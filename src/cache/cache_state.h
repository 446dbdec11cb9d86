#pragma once

#include <cstdint>

#include "cache/flight.h"
#include "cache/memory_store.h"

namespace sluice::cache {

// What the answer cache shares across workers: the stored answers and the calls in the air.
// One per process, kept across reloads.
struct CacheState {
  CacheState(std::uint64_t memory_bytes, std::uint64_t replay_bytes)
      : answers(memory_bytes), replays(replay_bytes) {}

  MemoryStore answers;
  Flights flights;
  // Answers kept for retries under an Idempotency-Key, and such calls in the air: apart from
  // the cache (other keys, other lifetimes, a different bound).
  MemoryStore replays;
  Flights replay_flights;
};

}  // namespace sluice::cache
