#pragma once

#include <functional>
#include <memory>
#include <string>

#include "core/result.h"

namespace CLI {
class App;
}

namespace sluice::config {
struct Config;
}

namespace sluice::server {

// The config at `path` loaded and compiled as `sluice serve` starts it (providers::
// load_config_file, then pipeline::Snapshot::build: what validation alone cannot see, such as
// an unreadable CA file or a price catalogue that does not load, fails here too). For
// check-config and routes (config/check_config_command.h).
Result<std::shared_ptr<const config::Config>> check_config_file(const std::string& path);

// `sluice serve -c FILE`: runs the gateway until SIGTERM or SIGINT has drained it (server.h).
// Exit 0 after a drain, 1 when the config does not load (logged).
//
// Adds the command to `app`; the returned function runs it when it was chosen (after
// app.parse) and returns the exit status, or -1 when it was not.
std::function<int()> add_serve_command(CLI::App& app);

}  // namespace sluice::server
