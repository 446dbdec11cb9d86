#pragma once

#include <cstdint>
#include <limits>
#include <optional>

namespace sluice::tenancy {

// Amounts are int64 micro-units. A sum that a request asks for (allocations against a budget)
// is checked: the rules refuse one that does not fit. A sum of what was spent (the ledger, this
// instance's charges) saturates instead: a total that does not fit is above every cap, so a
// hard budget refuses rather than wrapping to a small or negative number.

inline std::optional<std::int64_t> checked_add(std::int64_t a, std::int64_t b) {
  std::int64_t out = 0;
  if (__builtin_add_overflow(a, b, &out)) {
    return std::nullopt;
  }
  return out;
}

inline std::int64_t saturating_add(std::int64_t a, std::int64_t b) {
  std::int64_t out = 0;
  if (__builtin_add_overflow(a, b, &out)) {
    return b > 0 ? std::numeric_limits<std::int64_t>::max()
                 : std::numeric_limits<std::int64_t>::min();
  }
  return out;
}

inline std::int64_t saturating_sub(std::int64_t a, std::int64_t b) {
  std::int64_t out = 0;
  if (__builtin_sub_overflow(a, b, &out)) {
    return b < 0 ? std::numeric_limits<std::int64_t>::max()
                 : std::numeric_limits<std::int64_t>::min();
  }
  return out;
}

}  // namespace sluice::tenancy
