#include "config/routes_command.h"

#include <iostream>

#include "config/config.h"
#include "config/routes_report.h"

namespace sluice::config {

std::function<int()> add_routes_command(CLI::App& app, ConfigFileCheck check) {
  return add_config_file_command(
      app, "routes",
      "Print each route's policy tree, retry settings and worst-case latency, and exit",
      std::move(check), [](const std::string&, const Config& cfg) {
        std::cout << describe_routes(cfg);
        return 0;
      });
}

}  // namespace sluice::config
