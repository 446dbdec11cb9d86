#include "limits/ticket.h"

#include <charconv>

namespace sluice::limits {

HeaderValues header_values(const Figures& figures, std::array<char, 64>& buffer) {
  char* at = buffer.data();
  char* const end = buffer.data() + buffer.size();
  const auto put = [&](std::uint64_t value) { at = std::to_chars(at, end, value).ptr; };
  const auto view = [&](char* from) {
    return std::string_view(from, static_cast<std::size_t>(at - from));
  };
  HeaderValues out;
  char* from = at;
  put(figures.limit);
  out.limit = view(from);
  from = at;
  put(figures.remaining);
  out.remaining = view(from);
  from = at;
  // OpenAI writes durations as Go does: "450ms" under a second, else "[<h>h][<m>m]<s>s" with
  // fractional seconds ("1.5s", "6m0s").
  const std::uint64_t ms = static_cast<std::uint64_t>(figures.reset.count());
  if (ms < 1000) {
    put(ms);
    *at++ = 'm';
    *at++ = 's';
  } else {
    const std::uint64_t s = ms / 1000;
    if (s >= 3600) {
      put(s / 3600);
      *at++ = 'h';
    }
    if (s >= 60) {
      put(s / 60 % 60);
      *at++ = 'm';
    }
    put(s % 60);
    if (const std::uint64_t frac = ms % 1000; frac != 0) {
      *at++ = '.';
      std::uint64_t digits = frac;
      std::uint64_t scale = 100;
      while (digits != 0) {
        *at++ = static_cast<char>('0' + digits / scale);
        digits %= scale;
        scale /= 10;
      }
    }
    *at++ = 's';
  }
  out.reset = view(from);
  return out;
}

}  // namespace sluice::limits
