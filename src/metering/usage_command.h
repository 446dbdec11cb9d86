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

namespace sluice::metering {

// Loads a config file (providers::load_config_file: main passes it in, metering/ does not see
// the adapters).
using ConfigFileLoader =
    std::function<Result<std::shared_ptr<const config::Config>>(const std::string& path)>;

// `sluice usage [--by ... --since ... ...]` (a report, store/usage_report.h), `sluice usage show
// REQUEST_ID` (one record) and `sluice usage export [--since --until]` (every record of a range
// as JSON lines, metering/record_json.h), reading the store that --store (sqlite:PATH or a
// postgresql:// URL) or the config file of --config names. The store is opened as it is: never
// created or migrated. Exit 0 printed, 1 the store failed or has no such request, 2 bad
// parameters; errors on stderr.
//
// Adds the command to `app`; the returned function runs it when it was chosen (after
// app.parse) and returns the exit status, or -1 when it was not.
std::function<int()> add_usage_command(CLI::App& app, ConfigFileLoader load_config);

}  // namespace sluice::metering
