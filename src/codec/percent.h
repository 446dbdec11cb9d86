#pragma once

#include <string>
#include <string_view>

namespace sluice::codec {

// Percent-decoding (RFC 3986 section 2.1). A malformed escape ('%' not followed by two hex
// digits) is kept as it is; never fails. `plus_is_space`: '+' decodes to a space, as in
// application/x-www-form-urlencoded query strings.
std::string percent_decode(std::string_view text, bool plus_is_space = false);

}  // namespace sluice::codec
