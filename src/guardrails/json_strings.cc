#include "guardrails/json_strings.h"

#include <vector>

#include "codec/json_writer.h"

namespace sluice::guardrails {
namespace {

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool read_hex4(std::string_view s, std::size_t at, std::uint32_t& out) {
  if (at + 4 > s.size()) return false;
  out = 0;
  for (std::size_t i = at; i < at + 4; ++i) {
    const int v = hex_value(s[i]);
    if (v < 0) return false;
    out = (out << 4) | static_cast<std::uint32_t>(v);
  }
  return true;
}

void append_utf8(std::string& out, std::uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

// The index of the quote that closes the string opened before `at`, or npos.
std::size_t string_end(std::string_view json, std::size_t at) {
  while (at < json.size()) {
    const char c = json[at];
    if (c == '"') return at;
    at += c == '\\' ? 2 : 1;
  }
  return std::string_view::npos;
}

std::size_t skip_space(std::string_view json, std::size_t at) {
  while (at < json.size() &&
         (json[at] == ' ' || json[at] == '\t' || json[at] == '\n' || json[at] == '\r')) {
    ++at;
  }
  return at;
}

}  // namespace

bool unescape_json(std::string_view s, std::string& out) {
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (c != '\\') {
      out += c;
      continue;
    }
    if (++i >= s.size()) return false;
    switch (s[i]) {
      case '"':
        out += '"';
        break;
      case '\\':
        out += '\\';
        break;
      case '/':
        out += '/';
        break;
      case 'b':
        out += '\b';
        break;
      case 'f':
        out += '\f';
        break;
      case 'n':
        out += '\n';
        break;
      case 'r':
        out += '\r';
        break;
      case 't':
        out += '\t';
        break;
      case 'u': {
        std::uint32_t cp = 0;
        if (!read_hex4(s, i + 1, cp)) return false;
        i += 4;
        if (cp >= 0xD800 && cp <= 0xDBFF) {
          std::uint32_t low = 0;
          if (i + 2 < s.size() && s[i + 1] == '\\' && s[i + 2] == 'u' && read_hex4(s, i + 3, low) &&
              low >= 0xDC00 && low <= 0xDFFF) {
            cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
            i += 6;
          } else {
            cp = 0xFFFD;  // a lone surrogate: what a decoder would make of it
          }
        } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
          cp = 0xFFFD;
        }
        append_utf8(out, cp);
        break;
      }
      default:
        return false;
    }
  }
  return true;
}

std::optional<std::string> rewrite_strings(std::string_view json, const JsonStringVisitor& visit) {
  // The member each open container belongs to: its strings (an array's) and its members'
  // values are reported under it.
  std::vector<std::string_view> keys;
  std::string_view key;  // the member whose value comes next (objects), or the array's
  std::optional<std::string> out;
  std::size_t copied = 0;  // json[0, copied) is in `out`
  std::string scratch;
  std::size_t i = 0;
  while (i < json.size()) {
    const char c = json[i];
    if (c == '{' || c == '[') {
      keys.push_back(key);
      ++i;
      continue;
    }
    if (c == '}' || c == ']') {
      if (keys.empty()) break;
      key = keys.back();
      keys.pop_back();
      ++i;
      continue;
    }
    if (c != '"') {
      ++i;
      continue;
    }
    const std::size_t begin = i + 1;
    const std::size_t end = string_end(json, begin);
    if (end == std::string_view::npos) break;
    const std::string_view raw = json.substr(begin, end - begin);
    const std::size_t next = skip_space(json, end + 1);
    i = end + 1;
    if (next < json.size() && json[next] == ':') {
      key = raw;  // a member's name (keys of interest are never escaped)
      i = next + 1;
      continue;
    }
    std::string_view text = raw;
    if (raw.find('\\') != std::string_view::npos) {
      scratch.clear();
      if (!unescape_json(raw, scratch)) break;
      text = scratch;
    }
    std::optional<std::string> replaced = visit(JsonString{key, text, keys});
    if (replaced) {
      if (!out) {
        out.emplace();
        out->reserve(json.size() + 64);
      }
      out->append(json.substr(copied, begin - copied));
      codec::append_json_escaped(*out, *replaced);
      copied = end;
    }
  }
  if (out) {
    out->append(json.substr(copied));
  }
  return out;
}

}  // namespace sluice::guardrails
