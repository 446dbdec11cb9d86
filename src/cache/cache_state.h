#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "cache/flight.h"
#include "cache/key_aliases.h"
#include "cache/memory_store.h"
#include "cache/semantic_index.h"

namespace sluice::cache {

// What the answer cache shares across workers: the stored answers and the calls in the air.
// One per process, kept across reloads.
struct CacheState {
  CacheState(std::uint64_t memory_bytes, std::uint64_t replay_bytes,
             std::uint64_t semantic_bytes = 64 * 1024 * 1024)
      : answers(memory_bytes),
        key_aliases(memory_bytes / 64 / KeyAliases::kBytesPerAlias),
        replays(replay_bytes),
        semantic(semantic_bytes) {}

  // The breaker of the embeddings route `alias` (a semantic cache skips a route that keeps
  // failing); one per alias for the process's life. Taken when a chain is built, not per
  // request.
  SkipBreaker& embedding_breaker(std::string_view alias) {
    std::lock_guard lock(breakers_mu_);
    auto it = embedding_breakers_.find(alias);
    if (it == embedding_breakers_.end()) {
      it = embedding_breakers_.emplace(std::string(alias), std::make_unique<SkipBreaker>()).first;
    }
    return *it->second;
  }

  MemoryStore answers;
  // The answer keys of request bodies already seen (1/64 of the answers' memory bound): a
  // repeated body finds its entry without being decoded into IR.
  KeyAliases key_aliases;
  Flights flights;
  // Answers kept for retries under an Idempotency-Key, and such calls in the air: apart from
  // the cache (other keys, other lifetimes, a different bound).
  MemoryStore replays;
  Flights replay_flights;
  // The semantic cache's vectors, each naming an entry of `answers`.
  SemanticIndex semantic;

 private:
  std::mutex breakers_mu_;
  std::map<std::string, std::unique_ptr<SkipBreaker>, std::less<>> embedding_breakers_;
};

}  // namespace sluice::cache
