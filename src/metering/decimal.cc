#include "metering/decimal.h"

#include <algorithm>

namespace sluice::metering {

namespace {

using Limbs = std::array<std::uint64_t, 8>;
constexpr std::uint64_t kTen19 = 10'000'000'000'000'000'000ULL;

// false on overflow (the value is then saturated).
bool mul_small(Limbs& m, std::uint64_t f) {
  unsigned __int128 carry = 0;
  for (std::uint64_t& limb : m) {
    const unsigned __int128 v = static_cast<unsigned __int128>(limb) * f + carry;
    limb = static_cast<std::uint64_t>(v);
    carry = v >> 64;
  }
  if (carry != 0) {
    m.fill(~0ULL);
    return false;
  }
  return true;
}

bool add(Limbs& a, const Limbs& b) {
  unsigned __int128 carry = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const unsigned __int128 v = static_cast<unsigned __int128>(a[i]) + b[i] + carry;
    a[i] = static_cast<std::uint64_t>(v);
    carry = v >> 64;
  }
  if (carry != 0) {
    a.fill(~0ULL);
    return false;
  }
  return true;
}

std::uint64_t div_small(Limbs& m, std::uint64_t d) {
  unsigned __int128 rem = 0;
  std::size_t top = m.size();
  while (top > 0 && m[top - 1] == 0) {
    --top;
  }
  for (std::size_t i = top; i-- > 0;) {
    const unsigned __int128 cur = (rem << 64) | m[i];
    m[i] = static_cast<std::uint64_t>(cur / d);
    rem = cur % d;
  }
  return static_cast<std::uint64_t>(rem);
}

bool is_zero(const Limbs& m) {
  return std::all_of(m.begin(), m.end(), [](std::uint64_t v) { return v == 0; });
}

std::uint64_t pow10(unsigned n) {
  std::uint64_t v = 1;
  while (n-- > 0) {
    v *= 10;
  }
  return v;
}

void mul_pow10(Limbs& m, unsigned n) {
  while (n >= 19) {
    mul_small(m, kTen19);
    n -= 19;
  }
  mul_small(m, pow10(n));
}

void div_pow10(Limbs& m, unsigned n) {
  while (n >= 19) {
    div_small(m, kTen19);
    n -= 19;
  }
  div_small(m, pow10(n));
}

}  // namespace

Decimal::Decimal(std::uint64_t mantissa, unsigned scale) : scale_(scale) { m_[0] = mantissa; }

std::optional<Decimal> Decimal::parse(std::string_view text, unsigned max_fraction_digits,
                                      std::uint64_t max_integer_part, std::string* why) {
  const auto fail = [&](std::string reason) -> std::optional<Decimal> {
    if (why != nullptr) {
      *why = std::move(reason);
    }
    return std::nullopt;
  };
  const std::size_t point = text.find('.');
  const std::string_view whole = text.substr(0, point);
  std::string_view fraction =
      point == std::string_view::npos ? std::string_view() : text.substr(point + 1);
  const auto all_digits = [](std::string_view s) {
    return std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
  };
  if (whole.empty() || !all_digits(whole) || !all_digits(fraction)) {
    return fail("expected a plain decimal number such as 2.50 (no sign, exponent or unit)");
  }
  while (!fraction.empty() && fraction.back() == '0') {
    fraction.remove_suffix(1);
  }
  if (fraction.size() > max_fraction_digits) {
    return fail("more than " + std::to_string(max_fraction_digits) +
                " decimal places cannot be held exactly");
  }
  std::uint64_t integer = 0;
  for (char c : whole) {
    const std::uint64_t digit = static_cast<std::uint64_t>(c - '0');
    if (integer > (max_integer_part - digit) / 10) {
      return fail("must be at most " + std::to_string(max_integer_part));
    }
    integer = integer * 10 + digit;
  }
  Decimal out(integer, 0);
  out = out.rescaled(static_cast<unsigned>(fraction.size()));
  Limbs frac{};
  for (char c : fraction) {
    mul_small(frac, 10);
    Limbs digit{};
    digit[0] = static_cast<std::uint64_t>(c - '0');
    add(frac, digit);
  }
  add(out.m_, frac);
  return out;
}

Decimal Decimal::rescaled(unsigned scale) const {
  Decimal out = *this;
  if (scale > scale_) {
    mul_pow10(out.m_, scale - scale_);
    out.scale_ = scale;
  }
  return out;
}

Decimal Decimal::operator+(const Decimal& other) const {
  const unsigned scale = std::max(scale_, other.scale_);
  Decimal a = rescaled(scale);
  const Decimal b = other.rescaled(scale);
  add(a.m_, b.m_);
  return a;
}

Decimal Decimal::times(std::uint64_t factor, unsigned scale) const {
  Decimal out = *this;
  mul_small(out.m_, factor);
  out.scale_ += scale;
  return out;
}

bool Decimal::operator==(const Decimal& other) const {
  const unsigned scale = std::max(scale_, other.scale_);
  return rescaled(scale).m_ == other.rescaled(scale).m_;
}

bool Decimal::is_zero() const { return metering::is_zero(m_); }

std::optional<std::int64_t> Decimal::round_to(unsigned digits) const {
  Limbs m = m_;
  if (scale_ <= digits) {
    mul_pow10(m, digits - scale_);
  } else {
    // Half up: floor((m + 10^k / 2) / 10^k), and chained floor divisions are exact.
    const unsigned k = scale_ - digits;
    Limbs half{};
    half[0] = 5;
    mul_pow10(half, k - 1);
    add(m, half);
    div_pow10(m, k);
  }
  if (std::any_of(m.begin() + 1, m.end(), [](std::uint64_t v) { return v != 0; }) ||
      m[0] > static_cast<std::uint64_t>(INT64_MAX)) {
    return std::nullopt;
  }
  return static_cast<std::int64_t>(m[0]);
}

std::string Decimal::to_string() const {
  std::string out;
  append_to(out);
  return out;
}

void Decimal::append_to(std::string& out) const {
  // 512 bits are at most 155 decimal digits; the scale adds leading zeros.
  char digits[160 + 2 * 19];
  std::size_t n = 0;  // digits[0..n) least significant first
  Limbs m = m_;
  while (!metering::is_zero(m)) {
    std::uint64_t chunk = div_small(m, kTen19);
    for (int i = 0; i < 19; ++i) {
      digits[n++] = static_cast<char>('0' + chunk % 10);
      chunk /= 10;
    }
  }
  while (n > 0 && digits[n - 1] == '0') {
    --n;  // leading zeros of the top chunk
  }
  std::size_t skip = 0;  // trailing zeros of the fraction
  while (skip < scale_ && skip < n && digits[skip] == '0') {
    ++skip;
  }
  if (n <= scale_) {
    out += '0';
    if (n == skip) {
      return;  // zero
    }
    out += '.';
    out.append(scale_ - n, '0');
    for (std::size_t i = n; i-- > skip;) {
      out += digits[i];
    }
    return;
  }
  for (std::size_t i = n; i-- > scale_;) {
    out += digits[i];
  }
  if (skip < scale_) {
    out += '.';
    for (std::size_t i = scale_; i-- > skip;) {
      out += digits[i];
    }
  }
}

std::string format_micros(std::int64_t micros) {
  if (micros < 0) {
    return "-" + Decimal(static_cast<std::uint64_t>(-(micros + 1)) + 1, 6).to_string();
  }
  return Decimal(static_cast<std::uint64_t>(micros), 6).to_string();
}

}  // namespace sluice::metering
