#pragma once

#include <functional>

#include "config/check_config_command.h"

namespace CLI {
class App;
}

namespace sluice::config {

// `sluice routes FILE`: checks the config as check-config does, then prints each route's
// policy tree, retry settings and worst-case latency (routes_report.h), exit 0; or the error
// on stderr, exit 1.
//
// Adds the command to `app`; the returned function runs it when it was chosen (after
// app.parse) and returns the exit status, or -1 when it was not.
std::function<int()> add_routes_command(CLI::App& app, ConfigFileCheck check);

}  // namespace sluice::config
