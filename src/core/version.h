#pragma once

namespace sluice {

inline constexpr const char* kVersion = SLUICE_VERSION;
inline constexpr const char* kUserAgent = "sluice/" SLUICE_VERSION;

}  // namespace sluice
