#include "json_text.h"

namespace sluice::mock {

void append_json_string(std::string& out, std::string_view s) {
  static constexpr char kHex[] = "0123456789abcdef";
  out.push_back('"');
  for (char c : s) {
    auto u = static_cast<unsigned char>(c);
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      default:
        if (u < 0x20) {
          out += "\\u00";
          out.push_back(kHex[u >> 4]);
          out.push_back(kHex[u & 0xf]);
        } else {
          out.push_back(c);
        }
    }
  }
  out.push_back('"');
}

void append_google_json(std::string& out, std::string_view compact, GoogleJsonStyle style) {
  const bool pretty = style == GoogleJsonStyle::kPretty;
  std::size_t depth = 0;
  auto newline = [&] {
    out.push_back('\n');
    out.append(2 * depth, ' ');
  };
  bool in_string = false;
  for (std::size_t i = 0; i < compact.size(); ++i) {
    char c = compact[i];
    out.push_back(c);
    if (in_string) {
      if (c == '\\' && i + 1 < compact.size()) {
        out.push_back(compact[++i]);
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    switch (c) {
      case '"':
        in_string = true;
        break;
      case ':':
        out.push_back(' ');
        break;
      case ',':
        if (pretty) {
          newline();
        }
        break;
      case '{':
      case '[':
        if (pretty) {
          char close = c == '{' ? '}' : ']';
          if (i + 1 < compact.size() && compact[i + 1] == close) {
            out.push_back(close);
            ++i;
          } else {
            ++depth;
            newline();
          }
        }
        break;
      case '}':
      case ']':
        if (pretty) {
          out.pop_back();
          depth = depth > 0 ? depth - 1 : 0;
          newline();
          out.push_back(c);
        }
        break;
      default:
        break;
    }
  }
}

void append_base64(std::string& out, const std::uint8_t* data, std::size_t size) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::size_t i = 0;
  for (; i + 3 <= size; i += 3) {
    std::uint32_t v = (std::uint32_t{data[i]} << 16) | (std::uint32_t{data[i + 1]} << 8) |
                      std::uint32_t{data[i + 2]};
    out.push_back(kAlphabet[(v >> 18) & 63]);
    out.push_back(kAlphabet[(v >> 12) & 63]);
    out.push_back(kAlphabet[(v >> 6) & 63]);
    out.push_back(kAlphabet[v & 63]);
  }
  std::size_t rest = size - i;
  if (rest == 1) {
    std::uint32_t v = std::uint32_t{data[i]} << 16;
    out.push_back(kAlphabet[(v >> 18) & 63]);
    out.push_back(kAlphabet[(v >> 12) & 63]);
    out += "==";
  } else if (rest == 2) {
    std::uint32_t v = (std::uint32_t{data[i]} << 16) | (std::uint32_t{data[i + 1]} << 8);
    out.push_back(kAlphabet[(v >> 18) & 63]);
    out.push_back(kAlphabet[(v >> 12) & 63]);
    out.push_back(kAlphabet[(v >> 6) & 63]);
    out.push_back('=');
  }
}

}  // namespace sluice::mock
