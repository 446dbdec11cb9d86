#pragma once

#include <chrono>
#include <cstddef>
#include <string>

#include "cache/key.h"
#include "ir/response.h"

namespace sluice::cache {

// One cached answer, immutable once stored and shared by every request it serves. The answer
// is kept as IR, so one entry is encoded for whichever protocol and mode asks (cache/replay.h).
struct Entry {
  ir::Response answer;
  // Where it was stored, for purges: the route's first alias, its whole scope (cache/key.h
  // KeyScope::route) and the tenant.
  std::string alias;
  std::string route;
  std::string tenant;
  // The target that produced the answer (a fallback's second target, not the first).
  std::string provider;
  std::string model;
  std::chrono::system_clock::time_point stored_at;  // the Age header counts from here
  std::chrono::steady_clock::time_point fresh_until;
  std::chrono::steady_clock::time_point stale_until;  // == fresh_until without revalidation
  // An idempotent replay's request (cache/key.h request_digest); zero for cache entries.
  Key request_digest{};
  // What the entry counts against the store's memory bound (entry_bytes).
  std::size_t bytes = 0;
};

// The memory an entry holds: its strings and parts, plus a fixed allowance for the entry, its
// key and the store's bookkeeping, so that many tiny answers cannot exceed the bound either.
std::size_t entry_bytes(const Entry& entry);

}  // namespace sluice::cache
