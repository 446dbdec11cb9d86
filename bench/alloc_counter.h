#pragma once

// A counting operator new for a benchmark executable: include this header in exactly one
// translation unit of the binary (each *_bench.cc is its own executable). The figure of interest
// is allocations per event in steady state, read as a delta of allocation_count() around the
// timed loop.

#include <atomic>
#include <cstddef>
#include <cstdlib>
#include <new>

namespace sluice::bench {

inline std::atomic<std::size_t> g_allocations{0};

inline std::size_t allocation_count() { return g_allocations.load(std::memory_order_relaxed); }

}  // namespace sluice::bench

void* operator new(std::size_t n) {
  sluice::bench::g_allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(n == 0 ? 1 : n)) {
    return p;
  }
  throw std::bad_alloc();
}
// The replacement new above allocates with malloc, so free is the matching release; GCC cannot
// see through the replacement and warns.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
#pragma GCC diagnostic pop
