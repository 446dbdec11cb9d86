#include "codec/base64.h"

#include <array>
#include <cstdint>

namespace sluice::codec {
namespace {

constexpr std::string_view kStandard =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
constexpr std::string_view kUrl =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

constexpr std::uint8_t kInvalid = 0xff;

// Either alphabet's characters to their 6 bits.
constexpr std::array<std::uint8_t, 256> make_values() {
  std::array<std::uint8_t, 256> values{};
  for (std::uint8_t& v : values) {
    v = kInvalid;
  }
  for (std::size_t i = 0; i < 64; ++i) {
    values[static_cast<unsigned char>(kStandard[i])] = static_cast<std::uint8_t>(i);
    values[static_cast<unsigned char>(kUrl[i])] = static_cast<std::uint8_t>(i);
  }
  return values;
}
constexpr std::array<std::uint8_t, 256> kValues = make_values();

}  // namespace

void append_base64(std::string& out, std::string_view bytes, Base64Alphabet alphabet) {
  const std::string_view chars = alphabet == Base64Alphabet::kStandard ? kStandard : kUrl;
  const bool pad = alphabet == Base64Alphabet::kStandard;
  out.reserve(out.size() + (bytes.size() + 2) / 3 * 4);
  std::size_t i = 0;
  for (; i + 3 <= bytes.size(); i += 3) {
    const std::uint32_t n = static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[i])) << 16 |
                            static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[i + 1]))
                                << 8 |
                            static_cast<unsigned char>(bytes[i + 2]);
    out.push_back(chars[n >> 18 & 63]);
    out.push_back(chars[n >> 12 & 63]);
    out.push_back(chars[n >> 6 & 63]);
    out.push_back(chars[n & 63]);
  }
  const std::size_t left = bytes.size() - i;
  if (left == 0) {
    return;
  }
  std::uint32_t n = static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[i])) << 16;
  if (left == 2) {
    n |= static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[i + 1])) << 8;
  }
  out.push_back(chars[n >> 18 & 63]);
  out.push_back(chars[n >> 12 & 63]);
  if (left == 2) {
    out.push_back(chars[n >> 6 & 63]);
  }
  if (pad) {
    out.append(left == 1 ? "==" : "=");
  }
}

std::string base64(std::string_view bytes, Base64Alphabet alphabet) {
  std::string out;
  append_base64(out, bytes, alphabet);
  return out;
}

std::optional<std::string> decode_base64(std::string_view text) {
  if (text.size() % 4 == 0 && !text.empty()) {
    const std::size_t padding = text.ends_with("==") ? 2 : text.ends_with('=') ? 1 : 0;
    text.remove_suffix(padding);
  }
  if (text.size() % 4 == 1) {
    return std::nullopt;
  }
  std::string out;
  out.reserve(text.size() / 4 * 3 + 2);
  std::uint32_t bits = 0;
  int count = 0;
  for (const char c : text) {
    const std::uint8_t v = kValues[static_cast<unsigned char>(c)];
    if (v == kInvalid) {
      return std::nullopt;
    }
    bits = bits << 6 | v;
    count += 6;
    if (count >= 8) {
      count -= 8;
      out.push_back(static_cast<char>(bits >> count & 0xff));
    }
  }
  if ((bits & ((1u << count) - 1)) != 0) {
    return std::nullopt;  // bits left over that no byte uses
  }
  return out;
}

}  // namespace sluice::codec
