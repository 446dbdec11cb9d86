#pragma once

#include <optional>
#include <string>
#include <string_view>

// Base64 (RFC 4648): the standard alphabet with padding (section 4), as Bedrock wraps the bytes
// of InvokeModelWithResponseStream chunks, and the URL-safe alphabet without padding (section
// 5), as JSON Web Tokens are written (RFC 7515).
namespace sluice::codec {

enum class Base64Alphabet : bool { kStandard, kUrlUnpadded };

void append_base64(std::string& out, std::string_view bytes,
                   Base64Alphabet alphabet = Base64Alphabet::kStandard);
std::string base64(std::string_view bytes, Base64Alphabet alphabet = Base64Alphabet::kStandard);

// The bytes `text` encodes in either alphabet, padded or not; nullopt for any other character
// (whitespace included), a length no encoding has, or non-zero bits after the last byte.
std::optional<std::string> decode_base64(std::string_view text);

}  // namespace sluice::codec
