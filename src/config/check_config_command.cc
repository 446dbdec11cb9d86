#include "config/check_config_command.h"

#include <iostream>

#include <CLI/CLI.hpp>

#include "config/config.h"

namespace sluice::config {

std::function<int()> add_config_file_command(
    CLI::App& app, const std::string& name, const std::string& description, ConfigFileCheck check,
    std::function<int(const std::string& path, const Config& config)> run) {
  auto path = std::make_shared<std::string>();
  CLI::App* command = app.add_subcommand(name, description);
  command->add_option("file", *path, "YAML config file")->required();
  return [command, path, check = std::move(check), run = std::move(run)] {
    if (!*command) {
      return -1;
    }
    auto cfg = check(*path);
    if (!cfg) {
      std::cerr << cfg.error().message() << "\n";
      return 1;
    }
    return run(*path, **cfg);
  };
}

std::function<int()> add_check_config_command(CLI::App& app, ConfigFileCheck check) {
  return add_config_file_command(app, "check-config", "Validate a config file and exit",
                                 std::move(check), [](const std::string& path, const Config& cfg) {
                                   std::cout << "OK: " << path << " (version " << cfg.version
                                             << ", " << cfg.providers.size() << " providers, "
                                             << cfg.routes.size() << " routes, " << cfg.keys.size()
                                             << " keys)\n";
                                   for (const std::string& note : cfg.notes) {
                                     std::cout << "note: " << note << "\n";
                                   }
                                   return 0;
                                 });
}

}  // namespace sluice::config
