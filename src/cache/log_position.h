#pragma once

#include <compare>
#include <cstdint>

namespace sluice::cache {

// A place in a shared log (SharedStore::vectors_after): its records come in increasing order of
// it. Zero is before the first.
struct LogPosition {
  std::uint64_t major = 0;
  std::uint64_t minor = 0;
  auto operator<=>(const LogPosition&) const = default;
};

}  // namespace sluice::cache
