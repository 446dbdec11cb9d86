#pragma once

#include <cstdint>

#include "cache/flight.h"
#include "cache/memory_store.h"

namespace sluice::cache {

// What the answer cache shares across workers: the stored answers and the calls in the air.
// One per process, kept across reloads.
struct CacheState {
  explicit CacheState(std::uint64_t memory_bytes) : answers(memory_bytes) {}

  MemoryStore answers;
  Flights flights;
};

}  // namespace sluice::cache
