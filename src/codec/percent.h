#pragma once

#include <string>
#include <string_view>

namespace sluice::codec {

// Percent-decoding (RFC 3986 section 2.1). A malformed escape ('%' not followed by two hex
// digits) is kept as it is; never fails. `plus_is_space`: '+' decodes to a space, as in
// application/x-www-form-urlencoded query strings.
std::string percent_decode(std::string_view text, bool plus_is_space = false);

// Percent-encodes every byte but RFC 3986's unreserved characters (letters, digits, -._~):
// safe as a path segment or a query value.
std::string percent_encode(std::string_view text);

}  // namespace sluice::codec
