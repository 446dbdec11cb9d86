#include "protocol/tool_ids.h"

#include <cstdint>

namespace sluice::protocol {

bool is_id_word_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '-';
}

void append_id_hash(std::string& out, std::string_view id) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : id) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  static constexpr char kHex[] = "0123456789abcdef";
  out.push_back('_');
  for (int shift = 60; shift >= 0; shift -= 4) {
    out.push_back(kHex[(h >> shift) & 0xF]);
  }
}

}  // namespace sluice::protocol
