// The built-in detectors (docs/guardrails.md#detectors): hand-written scanners, each one pass
// over the text, with the validators that keep false positives down (Luhn for cards, mod 97
// for IBANs, the SSA's rules for SSNs, inet_pton for IPv6).
#include <algorithm>
#include <array>
#include <cstring>

#include <arpa/inet.h>

#include "guardrails/detector.h"

namespace sluice::guardrails {
namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_upper(char c) { return c >= 'A' && c <= 'Z'; }
bool is_lower(char c) { return c >= 'a' && c <= 'z'; }
bool is_alpha(char c) { return is_upper(c) || is_lower(c); }
bool is_alnum(char c) { return is_alpha(c) || is_digit(c); }
bool is_hex(char c) { return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }
bool is_token_char(char c) { return is_alnum(c) || c == '_' || c == '-'; }

// No letter or digit touches the candidate on that side.
bool free_before(std::string_view t, std::size_t i) { return i == 0 || !is_alnum(t[i - 1]); }
bool free_after(std::string_view t, std::size_t j) { return j >= t.size() || !is_alnum(t[j]); }

using Scan = void (*)(std::string_view, std::uint16_t, std::vector<Span>&);

// The next byte in [lo, hi] (ASCII) at or after `i`, or t.size(). Prose is mostly other bytes:
// the digit- and capital-led scanners skip it eight bytes at a time (a word-wide test for "any
// byte in range", then the byte loop only where one is) instead of their per-candidate checks.
template <char kLo, char kHi>
std::size_t next_in(std::string_view t, std::size_t i) {
  static_assert(kLo > 0 && kHi < 127 && kLo <= kHi);
  constexpr std::uint64_t kOnes = 0x0101010101010101ULL;
  constexpr std::uint64_t kHigh = 0x8080808080808080ULL;
  constexpr std::uint64_t kLow7 = kOnes * 127;
  const auto in_range = [](unsigned char c) { return c >= kLo && c <= kHi; };
  while (i + 8 <= t.size()) {
    std::uint64_t x;
    std::memcpy(&x, t.data() + i, 8);
    // Bytes b with kLo-1 < b < kHi+1, ASCII only (a set high bit excludes the byte).
    const std::uint64_t low = x & kLow7;
    const std::uint64_t hit =
        (kOnes * (127 + (kHi + 1)) - low) & ~x & (low + kOnes * (127 - (kLo - 1))) & kHigh;
    if (hit != 0) break;
    i += 8;
  }
  while (i < t.size() && !in_range(static_cast<unsigned char>(t[i]))) ++i;
  return i;
}

std::size_t next_digit(std::string_view t, std::size_t i) { return next_in<'0', '9'>(t, i); }
std::size_t next_upper(std::string_view t, std::size_t i) { return next_in<'A', 'Z'>(t, i); }

void add(std::vector<Span>& out, std::size_t begin, std::size_t end, std::uint16_t id) {
  out.push_back(Span{static_cast<std::uint32_t>(begin), static_cast<std::uint32_t>(end), id});
}

// --- PII ------------------------------------------------------------------------------------

bool email_local_char(char c) {
  return is_alnum(c) || c == '.' || c == '_' || c == '%' || c == '+' || c == '-';
}
bool email_domain_char(char c) { return is_alnum(c) || c == '.' || c == '-'; }

void scan_email(std::string_view t, std::uint16_t id, std::vector<Span>& out) {
  std::size_t from = 0;
  std::size_t last_end = 0;  // a local part may not reach back into the previous address
  while (from < t.size()) {
    const std::size_t at = t.find('@', from);
    if (at == std::string_view::npos) return;
    from = at + 1;
    std::size_t l = at;
    while (l > last_end && email_local_char(t[l - 1]) && at - l < 64) --l;
    while (l < at && t[l] == '.') ++l;
    if (l == at || t[at - 1] == '.') continue;
    std::size_t r = at + 1;
    while (r < t.size() && email_domain_char(t[r]) && r - at < 255) ++r;
    while (r > at + 1 && (t[r - 1] == '.' || t[r - 1] == '-')) --r;
    const std::string_view domain = t.substr(at + 1, r - at - 1);
    const std::size_t dot = domain.rfind('.');
    if (domain.empty() || dot == std::string_view::npos || dot == 0 || !is_alnum(domain[0]) ||
        domain.find("..") != std::string_view::npos) {
      continue;
    }
    const std::string_view tld = domain.substr(dot + 1);
    bool letters = tld.size() >= 2;
    for (const char c : tld) letters = letters && is_alpha(c);
    if (!letters) continue;
    add(out, l, r, id);
    from = last_end = r;
  }
}

bool luhn(const std::array<char, 19>& d, std::size_t n) {
  int sum = 0;
  for (std::size_t i = 0; i < n; ++i) {
    int v = d[n - 1 - i] - '0';
    if (i % 2 == 1) {
      v *= 2;
      if (v > 9) v -= 9;
    }
    sum += v;
  }
  return sum % 10 == 0;
}

// The issuer ranges of the card networks in use (Visa, Mastercard, Amex, Discover, JCB, Diners,
// UnionPay): a number outside them is not taken for a card whatever its checksum.
bool card_issuer(const std::array<char, 19>& d) {
  const int two = (d[0] - '0') * 10 + (d[1] - '0');
  const int four = two * 100 + (d[2] - '0') * 10 + (d[3] - '0');
  return d[0] == '4' || (two >= 51 && two <= 55) || (four >= 2221 && four <= 2720) || two == 34 ||
         two == 37 || two == 30 || two == 36 || two == 38 || two == 39 || two == 35 || two == 60 ||
         two == 62 || two == 64 || two == 65;
}

// Digits, optionally grouped by one kind of separator (a space or a dash) between digits.
void scan_card(std::string_view t, std::uint16_t id, std::vector<Span>& out) {
  std::size_t i = next_digit(t, 0);
  while (i < t.size()) {
    if (!free_before(t, i)) {
      i = next_digit(t, i + 1);
      continue;
    }
    std::array<char, 19> digits{};
    std::size_t n = 0;
    bool too_long = false;
    char separator = 0;
    std::size_t j = i;
    while (j < t.size()) {
      const char c = t[j];
      if (is_digit(c)) {
        if (n == digits.size()) too_long = true;
        if (!too_long) digits[n++] = c;
        ++j;
      } else if ((c == ' ' || c == '-') && (separator == 0 || separator == c) && j + 1 < t.size() &&
                 is_digit(t[j + 1])) {
        separator = c;
        ++j;
      } else {
        break;
      }
    }
    if (!too_long && n >= 13 && free_after(t, j) && card_issuer(digits) && luhn(digits, n)) {
      add(out, i, j, id);
    }
    i = next_digit(t, j);
  }
}

// E.164 (a '+', 8 to 15 digits, grouped or not) and national forms: 10 or 11 digits in at least
// two groups that start with a trunk '0' or an area code in parentheses, or that have North
// America's 3-3-4 shape. A bare run of digits without '+' is an id, not a phone.
void scan_phone(std::string_view t, std::uint16_t id, std::vector<Span>& out) {
  std::size_t i = 0;
  while (i < t.size()) {
    // A candidate starts at a digit, or at the '+' or '(' right before one.
    const std::size_t d = next_digit(t, i);
    if (d >= t.size()) return;
    i = d > i && (t[d - 1] == '+' || t[d - 1] == '(') ? d - 1 : d;
    const char c0 = t[i];
    const bool starts = i + 1 < t.size() && free_before(t, i) &&
                        (i == 0 || (t[i - 1] != '+' && t[i - 1] != '.' && t[i - 1] != '-'));
    if (!starts) {
      i = d + 1;
      continue;
    }
    const bool plus = c0 == '+';
    std::size_t j = plus ? i + 1 : i;
    std::size_t digits = 0;
    std::array<std::uint8_t, 8> groups{};
    std::size_t group_count = 0;
    bool paren = false;
    bool open = false;
    bool broken = false;
    while (j < t.size() && !broken) {
      const char c = t[j];
      if (is_digit(c)) {
        if (group_count == 0 || t[j - 1] < '0' || t[j - 1] > '9') {
          if (group_count == groups.size()) {
            broken = true;
            break;
          }
          ++group_count;
        }
        ++groups[group_count - 1];
        ++digits;
        ++j;
      } else if (c == '(' && !open && j + 1 < t.size() && is_digit(t[j + 1]) &&
                 (j == i || t[j - 1] == ' ')) {
        open = paren = true;
        ++j;
      } else if (c == ')' && open) {
        open = false;
        ++j;
      } else if ((c == ' ' || c == '-' || c == '.') && j + 1 < t.size() &&
                 (is_digit(t[j + 1]) || t[j + 1] == '(') && j > i && t[j - 1] != ' ' &&
                 t[j - 1] != '-' && t[j - 1] != '.') {
        ++j;
      } else {
        break;
      }
    }
    const std::size_t end = j;
    bool phone = false;
    if (!broken && !open && free_after(t, end) &&
        (end >= t.size() || t[end] != '.' || end + 1 >= t.size() || !is_digit(t[end + 1]))) {
      if (plus) {
        phone = digits >= 8 && digits <= 15;
      } else if (digits >= 10 && digits <= 11 && group_count >= 2) {
        const bool trunk = t[i] == '0';
        const bool nanp =
            (group_count == 3 && groups[0] == 3 && groups[1] == 3 && groups[2] == 4) ||
            (group_count == 4 && groups[0] == 1 && groups[1] == 3 && groups[2] == 3 &&
             groups[3] == 4);
        phone = paren || trunk || nanp;
      }
    }
    if (phone) {
      add(out, i, end, id);
      i = end;
    } else {
      i = std::max(j, i + 1);
    }
  }
}

// NNN-NN-NNNN (or spaced), with the numbers the SSA never issues left out: area 000, 666 and
// 900-999, group 00, serial 0000.
void scan_ssn(std::string_view t, std::uint16_t id, std::vector<Span>& out) {
  for (std::size_t i = next_digit(t, 0); i + 11 <= t.size(); i = next_digit(t, i + 1)) {
    const std::string_view s = t.substr(i, 11);
    const char sep = s[3];
    if ((sep != '-' && sep != ' ') || s[6] != sep || !free_before(t, i) || !free_after(t, i + 11)) {
      continue;
    }
    bool digits = true;
    for (const std::size_t k : {0, 1, 2, 4, 5, 7, 8, 9, 10}) digits = digits && is_digit(s[k]);
    if (!digits || (i > 0 && t[i - 1] == '-') || (i + 11 < t.size() && t[i + 11] == '-')) {
      continue;
    }
    const std::string_view area = s.substr(0, 3);
    if (area == "000" || area == "666" || area[0] == '9' || s.substr(4, 2) == "00" ||
        s.substr(7, 4) == "0000") {
      continue;
    }
    add(out, i, i + 11, id);
    i += 10;
  }
}

// Four dotted decimals of 0-255 (no leading zeros), not part of a longer dotted run.
void scan_ipv4(std::string_view t, std::uint16_t id, std::vector<Span>& out) {
  std::size_t i = next_digit(t, 0);
  while (i < t.size()) {
    if (!free_before(t, i) || (i > 0 && t[i - 1] == '.')) {
      i = next_digit(t, i + 1);
      continue;
    }
    std::size_t j = i;
    int octets = 0;
    bool ok = true;
    while (ok && octets < 4) {
      std::size_t k = j;
      int value = 0;
      while (k < t.size() && is_digit(t[k]) && k - j < 4) value = value * 10 + (t[k++] - '0');
      const std::size_t len = k - j;
      ok = len >= 1 && len <= 3 && value <= 255 && (len == 1 || t[j] != '0');
      if (!ok) break;
      ++octets;
      j = k;
      if (octets < 4) {
        if (j + 1 < t.size() && t[j] == '.' && is_digit(t[j + 1])) {
          ++j;
        } else {
          ok = false;
        }
      }
    }
    const bool longer =
        j < t.size() && (is_alnum(t[j]) || (t[j] == '.' && j + 1 < t.size() && is_digit(t[j + 1])));
    if (ok && octets == 4 && !longer) {
      add(out, i, j, id);
      i = next_digit(t, j);
      continue;
    }
    while (i < t.size() && (is_digit(t[i]) || t[i] == '.')) ++i;  // the rest of the run
    i = next_digit(t, i);
  }
}

// Around each ':' the run of hex digits, colons and dots (an embedded IPv4) that inet_pton takes
// for an IPv6 address; nothing that touches a letter, '_' or '::' of code ("std::string").
void scan_ipv6(std::string_view t, std::uint16_t id, std::vector<Span>& out) {
  const auto run_char = [](char c) { return is_hex(c) || c == ':' || c == '.'; };
  std::size_t from = 0;
  while (from < t.size()) {
    const std::size_t colon = t.find(':', from);
    if (colon == std::string_view::npos) return;
    std::size_t l = colon;
    while (l > 0 && run_char(t[l - 1])) --l;
    std::size_t r = colon;
    while (r < t.size() && run_char(t[r])) ++r;
    from = r + 1;
    while (r > l && t[r - 1] == '.') --r;  // a sentence's full stop
    const std::string_view cand = t.substr(l, r - l);
    const bool touches = (l > 0 && (is_alnum(t[l - 1]) || t[l - 1] == '_')) ||
                         (r < t.size() && (is_alnum(t[r]) || t[r] == '_'));
    std::size_t colons = 0;
    std::size_t hex = 0;
    for (const char c : cand) {
      colons += c == ':';
      hex += is_hex(c);
    }
    if (touches || colons < 2 || hex < 2 || cand.size() > 45) continue;
    std::array<char, 46> text{};
    std::memcpy(text.data(), cand.data(), cand.size());
    in6_addr addr{};
    if (inet_pton(AF_INET6, text.data(), &addr) == 1) add(out, l, r, id);
  }
}

// Two letters (a country), two check digits, 11 to 30 letters or digits (in groups of four when
// spaced), valid by ISO 13616's mod 97.
void scan_iban(std::string_view t, std::uint16_t id, std::vector<Span>& out) {
  std::size_t i = next_upper(t, 0);
  while (i + 15 <= t.size()) {
    if (!is_upper(t[i + 1]) || !is_digit(t[i + 2]) || !is_digit(t[i + 3]) || !free_before(t, i)) {
      i = next_upper(t, i + 1);
      continue;
    }
    std::array<char, 34> chars{};
    std::size_t n = 0;
    std::size_t j = i;
    bool spaced = false;
    while (j < t.size() && n < chars.size()) {
      const char c = t[j];
      if (is_upper(c) || is_digit(c)) {
        chars[n++] = c;
        ++j;
      } else if (c == ' ' && n % 4 == 0 && j + 1 < t.size() &&
                 (is_upper(t[j + 1]) || is_digit(t[j + 1]))) {
        spaced = true;
        ++j;
      } else {
        break;
      }
    }
    (void)spaced;
    if (n < 15 || !free_after(t, j)) {
      i = next_upper(t, i + 1);
      continue;
    }
    // Rearranged (the first four at the end), letters as 10..35, the remainder mod 97 is 1.
    int rem = 0;
    for (std::size_t k = 0; k < n; ++k) {
      const char c = chars[(k + 4) % n];
      if (is_digit(c)) {
        rem = (rem * 10 + (c - '0')) % 97;
      } else {
        rem = (rem * 100 + (c - 'A' + 10)) % 97;
      }
    }
    if (rem == 1) {
      add(out, i, j, id);
      i = next_upper(t, j);
    } else {
      i = next_upper(t, i + 1);
    }
  }
}

// --- secrets --------------------------------------------------------------------------------

// The next occurrence of `prefix` at or after `from`, or npos. Key prefixes end in '_' or '-',
// rare in prose: searched for that character (memchr), then the rest compared, instead of
// stopping at every 's' or 'g' of the text.
std::size_t find_prefix(std::string_view t, std::string_view prefix, std::size_t from) {
  const char anchor = prefix.back();
  if (anchor != '_' && anchor != '-') return t.find(prefix, from);
  std::size_t at = from + prefix.size() - 1;
  while (at < t.size()) {
    const void* hit = std::memchr(t.data() + at, anchor, t.size() - at);
    if (hit == nullptr) return std::string_view::npos;
    at = static_cast<std::size_t>(static_cast<const char*>(hit) - t.data());
    const std::size_t begin = at + 1 - prefix.size();
    if (t.compare(begin, prefix.size(), prefix) == 0) return begin;
    ++at;
  }
  return std::string_view::npos;
}

// Each occurrence of `prefix` not glued to a word before it (and that `keep` accepts), then at
// least `min` characters of `body`: [begin, end of the body run).
template <typename Body, typename Keep = bool (*)(std::size_t)>
void scan_prefixed(
    std::string_view t, std::string_view prefix, std::size_t min, Body body, std::uint16_t id,
    std::vector<Span>& out, Keep keep = [](std::size_t) { return true; }) {
  std::size_t from = 0;
  while (from < t.size()) {
    const std::size_t at = find_prefix(t, prefix, from);
    if (at == std::string_view::npos) return;
    std::size_t r = at + prefix.size();
    while (r < t.size() && body(t[r])) ++r;
    from = std::max(r, at + 1);
    if (r - at - prefix.size() >= min && (at == 0 || !is_token_char(t[at - 1])) &&
        (r >= t.size() || !is_token_char(t[r])) && keep(at)) {
      add(out, at, r, id);
    }
  }
}

void scan_private_key(std::string_view t, std::uint16_t id, std::vector<Span>& out) {
  std::size_t from = 0;
  while (from < t.size()) {
    const std::size_t at = t.find("-----BEGIN ", from);
    if (at == std::string_view::npos) return;
    const std::size_t line_end = t.find("-----", at + 11);
    from = at + 11;
    if (line_end == std::string_view::npos || line_end - at > 64 ||
        t.substr(at, line_end - at).find("PRIVATE KEY") == std::string_view::npos) {
      continue;
    }
    std::size_t end = t.size();  // a block cut short is still a key
    const std::size_t footer = t.find("-----END ", line_end + 5);
    if (footer != std::string_view::npos) {
      const std::size_t close = t.find("-----", footer + 9);
      end = close == std::string_view::npos ? t.size() : close + 5;
    }
    add(out, at, end, id);
    from = end;
  }
}

bool base64url(char c) { return is_alnum(c) || c == '-' || c == '_'; }

// header.payload.signature, both JSON objects in base64url ("eyJ" is '{"').
void scan_jwt(std::string_view t, std::uint16_t id, std::vector<Span>& out) {
  std::size_t from = 0;
  while (from < t.size()) {
    // 'J' is rarer in text than 'e': found first, then the "ey" before it.
    const std::size_t big_j = t.find('J', from + 2);
    if (big_j == std::string_view::npos) return;
    from = big_j - 1;
    if (t[big_j - 2] != 'e' || t[big_j - 1] != 'y') continue;
    const std::size_t at = big_j - 2;
    from = at + 3;
    if (at > 0 && (base64url(t[at - 1]) || t[at - 1] == '.')) continue;
    std::size_t parts[3] = {0, 0, 0};
    std::size_t j = at;
    int part = 0;
    while (j < t.size() && part < 3) {
      if (base64url(t[j])) {
        ++parts[part];
      } else if (t[j] == '.' && part < 2) {
        ++part;
      } else {
        break;
      }
      ++j;
    }
    if (part == 2 && parts[0] >= 10 && parts[1] >= 10 && t.substr(at + parts[0] + 1, 3) == "eyJ") {
      add(out, at, j, id);
      from = j;
    }
  }
}

void scan_aws_key(std::string_view t, std::uint16_t id, std::vector<Span>& out) {
  const auto upper_digit = [](char c) { return is_upper(c) || is_digit(c); };
  std::size_t from = 0;
  while (from < t.size()) {
    const std::size_t at = t.find('A', from);
    if (at == std::string_view::npos) return;
    from = at + 1;
    const std::string_view prefix = t.substr(at, 4);
    if (prefix != "AKIA" && prefix != "ASIA" && prefix != "ABIA" && prefix != "ACCA") continue;
    std::size_t r = at + 4;
    while (r < t.size() && upper_digit(t[r])) ++r;
    if (r - at == 20 && free_before(t, at) && free_after(t, r)) {
      add(out, at, r, id);
      from = r;
    }
  }
}

void scan_openai_key(std::string_view t, std::uint16_t id, std::vector<Span>& out) {
  scan_prefixed(t, "sk-", 20, is_token_char, id, out,
                [&](std::size_t at) { return t.substr(at, 7) != "sk-ant-"; });
}

void scan_anthropic_key(std::string_view t, std::uint16_t id, std::vector<Span>& out) {
  scan_prefixed(t, "sk-ant-", 20, is_token_char, id, out);
}

void scan_github_token(std::string_view t, std::uint16_t id, std::vector<Span>& out) {
  for (const std::string_view prefix : {"ghp_", "gho_", "ghu_", "ghs_", "ghr_"}) {
    scan_prefixed(t, prefix, 36, is_alnum, id, out);
  }
  scan_prefixed(
      t, "github_pat_", 22, [](char c) { return is_alnum(c) || c == '_'; }, id, out);
}

void scan_google_key(std::string_view t, std::uint16_t id, std::vector<Span>& out) {
  scan_prefixed(t, "AIza", 35, is_token_char, id, out);
}

void scan_slack_token(std::string_view t, std::uint16_t id, std::vector<Span>& out) {
  scan_prefixed(
      t, "xox", 12, [](char c) { return is_alnum(c) || c == '-'; }, id, out,
      [&](std::size_t at) {
        return at + 4 < t.size() &&
               std::string_view("bpaorsx").find(t[at + 3]) != std::string_view::npos &&
               t[at + 4] == '-';
      });
}

void scan_stripe_key(std::string_view t, std::uint16_t id, std::vector<Span>& out) {
  for (const std::string_view prefix : {"sk_live_", "rk_live_", "sk_test_", "rk_test_"}) {
    scan_prefixed(t, prefix, 16, is_alnum, id, out);
  }
}

struct Builtin {
  std::string_view name;
  std::string_view label;
  Scan scan;
};

constexpr Builtin kBuiltins[] = {
    {"email", "EMAIL", scan_email},
    {"phone", "PHONE", scan_phone},
    {"payment_card", "CARD", scan_card},
    {"iban", "IBAN", scan_iban},
    {"us_ssn", "SSN", scan_ssn},
    {"ipv4", "IP", scan_ipv4},
    {"ipv6", "IP", scan_ipv6},
    {"private_key", "PRIVATE_KEY", scan_private_key},
    {"jwt", "JWT", scan_jwt},
    {"aws_access_key", "AWS_KEY", scan_aws_key},
    {"openai_key", "API_KEY", scan_openai_key},
    {"anthropic_key", "API_KEY", scan_anthropic_key},
    {"github_token", "GITHUB_TOKEN", scan_github_token},
    {"google_api_key", "API_KEY", scan_google_key},
    {"slack_token", "SLACK_TOKEN", scan_slack_token},
    {"stripe_key", "API_KEY", scan_stripe_key},
};

constexpr std::string_view kNames[] = {
    "email",        "phone",          "payment_card", "iban",
    "us_ssn",       "ipv4",           "ipv6",         "private_key",
    "jwt",          "aws_access_key", "openai_key",   "anthropic_key",
    "github_token", "google_api_key", "slack_token",  "stripe_key"};
constexpr std::string_view kPii[] = {"email",  "phone", "payment_card", "iban",
                                     "us_ssn", "ipv4",  "ipv6"};
constexpr std::string_view kSecrets[] = {"private_key",    "jwt",           "aws_access_key",
                                         "openai_key",     "anthropic_key", "github_token",
                                         "google_api_key", "slack_token",   "stripe_key"};

class BuiltinDetector final : public Detector {
 public:
  explicit BuiltinDetector(const Builtin& b) : builtin_(b) {}
  std::string_view name() const override { return builtin_.name; }
  std::string_view label() const override { return builtin_.label; }
  void scan(std::string_view text, std::uint16_t id, std::vector<Span>& out) const override {
    const std::size_t first = out.size();
    builtin_.scan(text, id, out);
    // Scanners with several prefixes find in prefix order: put them in text order, no overlap.
    std::sort(out.begin() + static_cast<std::ptrdiff_t>(first), out.end(),
              [](const Span& a, const Span& b) { return a.begin < b.begin; });
  }

 private:
  const Builtin& builtin_;
};

}  // namespace

std::unique_ptr<Detector> builtin_detector(std::string_view name) {
  for (const Builtin& b : kBuiltins) {
    if (b.name == name) return std::make_unique<BuiltinDetector>(b);
  }
  return nullptr;
}

std::span<const std::string_view> builtin_detector_names() { return kNames; }
std::span<const std::string_view> pii_detector_names() { return kPii; }
std::span<const std::string_view> secret_detector_names() { return kSecrets; }

}  // namespace sluice::guardrails
