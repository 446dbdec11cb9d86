#include "codec/json_writer.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>

namespace sluice::codec {

namespace {

// Length of the well-formed UTF-8 sequence starting at text[i] (RFC 3629 section 4: no
// overlongs, no surrogates, nothing above U+10FFFF), or 0 if it is not one.
std::size_t utf8_sequence(std::string_view text, std::size_t i) {
  const auto b = [&](std::size_t k) { return static_cast<unsigned char>(text[i + k]); };
  const auto cont = [&](std::size_t k) { return i + k < text.size() && (b(k) & 0xC0) == 0x80; };
  const unsigned char c = b(0);
  if (c >= 0xC2 && c <= 0xDF) {
    return cont(1) ? 2 : 0;
  }
  if (c >= 0xE0 && c <= 0xEF) {
    if (!cont(1) || !cont(2)) {
      return 0;
    }
    if ((c == 0xE0 && b(1) < 0xA0) || (c == 0xED && b(1) > 0x9F)) {
      return 0;  // overlong, or a UTF-16 surrogate
    }
    return 3;
  }
  if (c >= 0xF0 && c <= 0xF4) {
    if (!cont(1) || !cont(2) || !cont(3)) {
      return 0;
    }
    if ((c == 0xF0 && b(1) < 0x90) || (c == 0xF4 && b(1) > 0x8F)) {
      return 0;  // overlong, or above U+10FFFF
    }
    return 4;
  }
  return 0;
}

}  // namespace

bool append_json_escaped(std::string& out, std::string_view text) {
  // Per byte: 0 copied as is, 1 escaped, 2 the start of a UTF-8 sequence to check (>= 0x80).
  static constexpr auto kClass = [] {
    std::array<std::uint8_t, 256> t{};
    for (int c = 0; c < 0x20; ++c) {
      t[c] = 1;
    }
    t['"'] = 1;
    t['\\'] = 1;
    for (int c = 0x80; c < 0x100; ++c) {
      t[c] = 2;
    }
    return t;
  }();
  static constexpr char kHex[] = "0123456789abcdef";
  constexpr std::uint64_t kOnes = 0x0101010101010101ULL;
  constexpr std::uint64_t kHighs = 0x8080808080808080ULL;
  // Written through a pointer into `out` (an append per escape costs more than the escape in
  // text full of newlines). Invariant: room for the rest of the text unescaped, so plain text
  // takes no more than it did; an escape makes room for itself and a quarter of the rest
  // (resize grows the capacity geometrically, the slack only spares calls).
  const std::size_t base = out.size();
  out.resize(base + text.size());
  char* p = out.data() + base;
  char* limit = out.data() + out.size();
  const auto room = [&](std::size_t rest) {  // rest: bytes left, the one to escape included
    if (static_cast<std::size_t>(limit - p) < rest + 5) {
      const std::size_t used = static_cast<std::size_t>(p - out.data());
      out.resize(used + rest + 5 + rest / 4);
      p = out.data() + used;
      limit = out.data() + out.size();
    }
  };
  bool well_formed = true;
  // One byte (or UTF-8 sequence) at text[i].
  const auto one = [&](std::size_t& i) {
    const auto c = static_cast<unsigned char>(text[i]);
    const std::uint8_t cls = kClass[c];
    if (cls == 0) {
      *p++ = static_cast<char>(c);
      ++i;
      return;
    }
    if (cls == 2) {
      // Text may come from upstream bytes (error messages quoting them, event names); JSON
      // must be UTF-8 (RFC 8259 section 8.1), so a malformed byte becomes U+FFFD instead of
      // making the whole document unparseable for the caller.
      if (const std::size_t n = utf8_sequence(text, i); n > 0) {
        std::memcpy(p, text.data() + i, n);
        p += n;
        i += n;
        return;
      }
      room(text.size() - i);
      std::memcpy(p, "\\ufffd", 6);
      p += 6;
      ++i;
      well_formed = false;
      return;
    }
    room(text.size() - i);
    char e = 0;
    switch (c) {
      case '"':
        e = '"';
        break;
      case '\\':
        e = '\\';
        break;
      case '\n':
        e = 'n';
        break;
      case '\r':
        e = 'r';
        break;
      case '\t':
        e = 't';
        break;
      case '\b':
        e = 'b';
        break;
      case '\f':
        e = 'f';
        break;
      default:
        break;
    }
    if (e != 0) {
      p[0] = '\\';
      p[1] = e;
      p += 2;
    } else {
      const char esc[6] = {'\\', 'u', '0', '0', kHex[c >> 4], kHex[c & 0xF]};
      std::memcpy(p, esc, 6);
      p += 6;
    }
    ++i;
  };
  std::size_t i = 0;
  while (i < text.size()) {
    // Eight plain bytes at once: none below 0x20, '"', '\\', or at or above 0x80 (the "has
    // less" and "has zero byte" tests of Bit Twiddling Hacks, exact for "any such byte").
    if (text.size() - i >= 8) {
      std::uint64_t w;
      std::memcpy(&w, text.data() + i, 8);
      const auto has_zero = [](std::uint64_t v) { return (v - kOnes) & ~v & kHighs; };
      const std::uint64_t special = ((w - 0x20 * kOnes) & ~w) | has_zero(w ^ ('"' * kOnes)) |
                                    has_zero(w ^ ('\\' * kOnes)) | w;
      if ((special & kHighs) == 0) {
        std::memcpy(p, &w, 8);
        p += 8;
        i += 8;
        continue;
      }
    }
    // Byte by byte to the end of that word: text dense with escapes stays in this loop.
    for (const std::size_t stop = std::min(text.size(), i + 8); i < stop;) {
      one(i);
    }
  }
  out.resize(static_cast<std::size_t>(p - out.data()));
  return well_formed;
}

JsonWriter& JsonWriter::string(std::string_view text) {
  out_.push_back('"');
  append_json_escaped(out_, text);
  out_.push_back('"');
  return *this;
}

JsonWriter& JsonWriter::string(const EscapedText& text) {
  if (!text.joinable_) {
    return string(text.text_);
  }
  out_.push_back('"');
  out_.append(text.escaped_);
  out_.push_back('"');
  return *this;
}

JsonWriter& JsonWriter::key(std::string_view key) {
  string(key);
  out_.push_back(':');
  return *this;
}

JsonWriter& JsonWriter::next_key(std::string_view trusted_key) {
  char buf[64];
  if (trusted_key.size() + 4 > sizeof buf) {
    return ch(',').key(trusted_key);
  }
  buf[0] = ',';
  buf[1] = '"';
  trusted_key.copy(buf + 2, trusted_key.size());
  buf[trusted_key.size() + 2] = '"';
  buf[trusted_key.size() + 3] = ':';
  out_.append(buf, trusted_key.size() + 4);
  return *this;
}

JsonWriter& JsonWriter::number(std::uint64_t v) {
  char buf[24];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  out_.append(buf, r.ptr);
  return *this;
}

JsonWriter& JsonWriter::number(std::int64_t v) {
  char buf[24];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  out_.append(buf, r.ptr);
  return *this;
}

JsonWriter& JsonWriter::number(double v) {
  if (!std::isfinite(v)) {
    return null();  // JSON has no NaN / Infinity
  }
  char buf[32];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  out_.append(buf, r.ptr);
  return *this;
}

}  // namespace sluice::codec
