// Wiring only: process settings, logging, and the command line built from each feature's
// commands.

#include <exception>
#include <functional>
#include <string>

#include <CLI/CLI.hpp>
#include <malloc.h>

#include "admin/cache_cli.h"
#include "admin/tenancy_cli.h"
#include "config/check_config_command.h"
#include "config/routes_command.h"
#include "core/version.h"
#include "metering/check_prices_command.h"
#include "metering/estimate_command.h"
#include "metering/usage_command.h"
#include "providers/registry.h"
#include "server/guardrails_command.h"
#include "server/serve_command.h"
#include "spdlog/sinks/stdout_color_sinks.h"
#include "spdlog/spdlog.h"

int main(int argc, char** argv) {
  // glibc returns freed heap to the kernel eagerly (trim at 128 KiB, mmap for blocks over
  // 128 KiB), so a request that allocates a large prompt pays page faults on every call.
  // A gateway's working set is stable: keep freed memory in the process.
  mallopt(M_MMAP_THRESHOLD, 32 * 1024 * 1024);
  mallopt(M_TRIM_THRESHOLD, 256 * 1024 * 1024);
  mallopt(M_TOP_PAD, 16 * 1024 * 1024);
  spdlog::set_default_logger(spdlog::stderr_color_mt("sluice"));
  spdlog::set_pattern("%Y-%m-%dT%H:%M:%S.%e %^%l%$ %v");

  CLI::App app{"Sluice: a self-hosted AI gateway"};
  app.set_version_flag("--version", std::string("sluice ") + sluice::kVersion);
  app.require_subcommand(1);

  const auto load_config = [](const std::string& path) {
    return sluice::providers::load_config_file(path);
  };
  const std::function<int()> commands[] = {
      sluice::config::add_check_config_command(app, sluice::server::check_config_file),
      sluice::config::add_routes_command(app, sluice::server::check_config_file),
      sluice::server::add_serve_command(app),
      sluice::metering::add_check_prices_command(app),
      sluice::metering::add_estimate_command(app),
      sluice::metering::add_usage_command(app, load_config),
      sluice::admin::add_tenancy_commands(app),
      sluice::admin::add_cache_commands(app),
      sluice::server::add_guardrails_command(app, sluice::server::check_config_file),
  };

  CLI11_PARSE(app, argc, argv);
  try {
    for (const std::function<int()>& run : commands) {
      if (const int status = run(); status >= 0) {
        return status;
      }
    }
    return 1;  // unreachable: require_subcommand(1)
  } catch (const std::exception& e) {
    spdlog::critical("fatal: {}", e.what());
    return 1;
  }
}
