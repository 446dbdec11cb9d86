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

// Loads a config file and checks it as `sluice serve` would (server/serve_command.h
// check_config_file: providers and routes compiled too); the error is what the user sees.
using ConfigFileCheck =
    std::function<Result<std::shared_ptr<const Config>>(const std::string& path)>;

// `sluice check-config FILE`: prints "OK: FILE (version N, P providers, R routes, K keys)" and
// each note of the load, exit 0; or the error on stderr, exit 1.
//
// Adds the command to `app`; the returned function runs it when it was chosen (after
// app.parse) and returns the exit status, or -1 when it was not.
std::function<int()> add_check_config_command(CLI::App& app, ConfigFileCheck check);

// A command `name` that takes one config FILE: when chosen, the file is checked (an error on
// stderr, exit 1), then `run` prints what the command shows and returns the exit status. The
// returned function is as add_check_config_command's.
std::function<int()> add_config_file_command(
    CLI::App& app, const std::string& name, const std::string& description, ConfigFileCheck check,
    std::function<int(const std::string& path, const Config& config)> run);

}  // namespace sluice::config
