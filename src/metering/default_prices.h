#pragma once

#include <string_view>

namespace sluice::metering {

// The text of prices/default.yaml as it was when the binary was built (a CMake step embeds it;
// the running binary never reads the source tree).
std::string_view default_prices_yaml();

}  // namespace sluice::metering
