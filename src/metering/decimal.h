#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace sluice::metering {

// An exact non-negative decimal: mantissa / 10^scale, the mantissa a 512-bit integer. Money
// in Sluice is computed with it and rounded once, at the end, to integer micro-units. Wide
// enough for 2^64 tokens times a rate with 6 decimals, layered with a dozen percentage
// discounts of 4 decimals each, without losing a digit. Plain value type; no allocation
// except to_string().
class Decimal {
 public:
  Decimal() = default;
  static Decimal from_integer(std::uint64_t value) { return Decimal(value, 0); }
  // value / 10^scale.
  Decimal(std::uint64_t mantissa, unsigned scale);

  // A plain decimal ("12", "0.125", "3."); no sign, exponent or spaces, at most
  // `max_fraction_digits` digits after the point (trailing zeros beyond it are accepted), and
  // at most `max_value` in integer part. nullopt with a reason in `why` otherwise.
  static std::optional<Decimal> parse(std::string_view text, unsigned max_fraction_digits,
                                      std::uint64_t max_integer_part, std::string* why);

  Decimal operator+(const Decimal& other) const;
  // this * factor / 10^scale (exact).
  Decimal times(std::uint64_t factor, unsigned scale = 0) const;
  bool operator==(const Decimal& other) const;
  bool is_zero() const;

  // Rounded to `digits` decimal places, half up (0.5 of the last unit rounds away from
  // zero), as an integer count of 10^-digits; nullopt when it does not fit in int64.
  std::optional<std::int64_t> round_to(unsigned digits) const;
  // The exact value, without trailing zeros: "0", "12", "0.0000125".
  std::string to_string() const;
  // The same, appended to `out` (no allocation beyond `out` growing).
  void append_to(std::string& out) const;
  unsigned scale() const { return scale_; }

 private:
  using Limbs = std::array<std::uint64_t, 8>;
  Limbs m_{};  // little-endian 64-bit limbs
  unsigned scale_ = 0;

  Decimal rescaled(unsigned scale) const;
};

// An amount in micro-units as an exact decimal string ("1.25" for 1'250'000).
std::string format_micros(std::int64_t micros);

}  // namespace sluice::metering
