#pragma once

#include <cstdint>
#include <string_view>

namespace sluice::codec {

// Tracks whether JSON text fed in pieces (streamed tool-call arguments) has reached the end of
// its top-level object or array: counts brackets outside strings, honouring escapes. It does
// not validate; a parser decides whether the text is JSON.
struct JsonScan {
  std::uint32_t depth = 0;
  bool started = false;
  bool in_string = false;
  bool escape = false;

  void feed(std::string_view text) {
    for (char c : text) {
      if (in_string) {
        if (escape) {
          escape = false;
        } else if (c == '\\') {
          escape = true;
        } else if (c == '"') {
          in_string = false;
        }
        continue;
      }
      if (c == '{' || c == '[') {
        started = true;
        ++depth;
      } else if ((c == '}' || c == ']') && depth > 0) {
        --depth;
      } else if (c == '"') {
        in_string = true;
      }
    }
  }
  bool complete() const { return started && depth == 0 && !in_string; }
};

}  // namespace sluice::codec
