#pragma once

#include <algorithm>
#include <string_view>

// Small pieces of HTTP field syntax (RFC 9110 section 5.6) shared by whoever reads a header
// value: optional whitespace and case-insensitive tokens.
namespace sluice::codec {

// `s` without leading and trailing optional whitespace (spaces and tabs).
inline std::string_view trim_ows(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) {
    s.remove_prefix(1);
  }
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) {
    s.remove_suffix(1);
  }
  return s;
}

// Whether `text` is `lower` in any ASCII letter case (`lower` is lower case already).
inline bool equals_lower(std::string_view text, std::string_view lower) {
  return text.size() == lower.size() &&
         std::equal(text.begin(), text.end(), lower.begin(), [](char a, char b) {
           return (a >= 'A' && a <= 'Z' ? static_cast<char>(a - 'A' + 'a') : a) == b;
         });
}

}  // namespace sluice::codec
