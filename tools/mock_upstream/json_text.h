#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace sluice::mock {

// Appends `s` as a quoted JSON string. Bytes >= 0x80 are copied unchanged (the input is
// expected to be UTF-8 already, as it came out of a JSON parser or a header).
void append_json_string(std::string& out, std::string_view s);

// How Google's APIs space their JSON.
enum class GoogleJsonStyle : std::uint8_t {
  kColonSpace,  // `{"a": 1,"b": [2]}`: a space after each ':' only (Gemini SSE events)
  kPretty,      // two-space indentation, one member per line (Gemini JSON bodies)
};

// Appends `compact` (JSON text without insignificant whitespace) re-spaced in `style`.
// Strings are copied unchanged; empty objects and arrays stay "{}" and "[]".
void append_google_json(std::string& out, std::string_view compact, GoogleJsonStyle style);

// Appends standard base64 (RFC 4648 section 4, with '=' padding) of `data`.
void append_base64(std::string& out, const std::uint8_t* data, std::size_t size);

}  // namespace sluice::mock
