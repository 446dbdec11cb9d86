#pragma once

#include <chrono>
#include <cstdint>
#include <string>

// Value types more than one config section uses.
namespace sluice::config {

using Millis = std::chrono::milliseconds;

// host:port as written in config; port 0 means "pick a free port" (tests).
struct ListenAddress {
  std::string host = "0.0.0.0";
  std::uint16_t port = 8080;
};

}  // namespace sluice::config
