#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "config/state.h"

namespace sluice::redis {

// Deletes every key matching `pattern` (SCAN MATCH, then UNLINK, a batch at a time) over a
// connection of its own that blocks: for the admin thread, never a worker's. Stops after
// `budget`. The count deleted, or nullopt with `error` set (what failed, never the URL).
std::optional<std::uint64_t> purge_matching(const config::StateSettings& settings,
                                            std::string_view pattern,
                                            std::chrono::milliseconds budget, std::string& error);

}  // namespace sluice::redis
