// Wiring only: command line, logging, config, server.

#include <csignal>
#include <cstdio>
#include <iostream>

#include <CLI/CLI.hpp>
#include <malloc.h>

#include "config/config.h"
#include "config/routes_report.h"
#include "core/version.h"
#include "pipeline/snapshot.h"
#include "providers/registry.h"
#include "server/server.h"
#include "spdlog/sinks/stdout_color_sinks.h"
#include "spdlog/spdlog.h"

namespace {

// Loads and compiles `path` as the server would; on failure prints the error on stderr.
std::shared_ptr<const sluice::config::Config> load_checked(const std::string& path) {
  auto cfg = sluice::providers::load_config_file(path);
  if (!cfg) {
    std::cerr << cfg.error().message() << "\n";
    return nullptr;
  }
  auto snap = sluice::pipeline::Snapshot::build(*cfg);
  if (!snap) {
    std::cerr << snap.error().message() << "\n";
    return nullptr;
  }
  return *cfg;
}

int check_config(const std::string& path) {
  auto cfg = load_checked(path);
  if (!cfg) {
    return 1;
  }
  std::cout << "OK: " << path << " (version " << cfg->version << ", " << cfg->providers.size()
            << " providers, " << cfg->routes.size() << " routes, " << cfg->keys.size()
            << " keys)\n";
  for (const std::string& note : cfg->notes) {
    std::cout << "note: " << note << "\n";
  }
  return 0;
}

int print_routes(const std::string& path) {
  auto cfg = load_checked(path);
  if (!cfg) {
    return 1;
  }
  std::cout << sluice::config::describe_routes(*cfg);
  return 0;
}

int serve(const std::string& path) {
  auto cfg = sluice::providers::load_config_file(path);
  if (!cfg) {
    spdlog::error("{}", cfg.error().message());
    return 1;
  }
  auto snap = sluice::pipeline::Snapshot::build(*cfg);
  if (!snap) {
    spdlog::error("{}", snap.error().message());
    return 1;
  }
  // Signals are handled by the server's signal_set; block them here so worker threads
  // (which inherit this mask) never receive them.
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  sluice::server::Server server(*snap, path);
  return server.run();
}

}  // namespace

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

  std::string check_path;
  auto* check = app.add_subcommand("check-config", "Validate a config file and exit");
  check->add_option("file", check_path, "YAML config file")->required();

  std::string routes_path;
  auto* routes = app.add_subcommand(
      "routes", "Print each route's policy tree, retry settings and worst-case latency, and exit");
  routes->add_option("file", routes_path, "YAML config file")->required();

  std::string serve_path;
  auto* serve_cmd = app.add_subcommand("serve", "Run the gateway");
  serve_cmd->add_option("-c,--config", serve_path, "YAML config file")->required();

  CLI11_PARSE(app, argc, argv);
  try {
    if (*check) {
      return check_config(check_path);
    }
    if (*routes) {
      return print_routes(routes_path);
    }
    return serve(serve_path);
  } catch (const std::exception& e) {
    spdlog::critical("fatal: {}", e.what());
    return 1;
  }
}
