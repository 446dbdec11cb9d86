#pragma once

#include <string_view>

namespace sluice {

// Names the calling thread as `top -H`, `perf` and /proc/PID/task/TID/comm show it (Linux keeps
// the first 15 bytes). Every long-lived thread of the gateway names itself, so an operator can
// see which one burns CPU (a worker, the usage writer, the access-log writer) and pin it.
void name_this_thread(std::string_view name);

}  // namespace sluice
