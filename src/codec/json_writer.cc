#include "codec/json_writer.h"

#include <charconv>
#include <cmath>

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

void append_json_escaped(std::string& out, std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::size_t run = 0;  // start of the pending run of bytes that need no escaping
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\') {
      continue;
    }
    if (c >= 0x80) {
      // Text may come from upstream bytes (error messages quoting them, event names); JSON
      // must be UTF-8 (RFC 8259 section 8.1), so a malformed byte becomes U+FFFD instead of
      // making the whole document unparseable for the caller.
      if (const std::size_t n = utf8_sequence(text, i); n > 0) {
        i += n - 1;
        continue;
      }
      out.append(text.data() + run, i - run);
      run = i + 1;
      out.append("\\ufffd");
      continue;
    }
    out.append(text.data() + run, i - run);
    run = i + 1;
    switch (c) {
      case '"':
        out.append("\\\"");
        break;
      case '\\':
        out.append("\\\\");
        break;
      case '\n':
        out.append("\\n");
        break;
      case '\r':
        out.append("\\r");
        break;
      case '\t':
        out.append("\\t");
        break;
      case '\b':
        out.append("\\b");
        break;
      case '\f':
        out.append("\\f");
        break;
      default: {
        const char esc[] = {'\\', 'u', '0', '0', kHex[c >> 4], kHex[c & 0xF]};
        out.append(esc, sizeof esc);
      }
    }
  }
  out.append(text.data() + run, text.size() - run);
}

JsonWriter& JsonWriter::string(std::string_view text) {
  out_.push_back('"');
  append_json_escaped(out_, text);
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
