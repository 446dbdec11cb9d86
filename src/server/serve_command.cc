#include "server/serve_command.h"

#include <csignal>

#include <CLI/CLI.hpp>

#include "http/json_post.h"
#include "pipeline/snapshot.h"
#include "providers/background_fetch.h"
#include "providers/registry.h"
#include "server/server.h"
#include "spdlog/spdlog.h"

namespace sluice::server {
namespace {

Result<std::shared_ptr<const pipeline::Snapshot>> load_snapshot(const std::string& path) {
  auto cfg = providers::load_config_file(path);
  if (!cfg) {
    return cfg.error();
  }
  return pipeline::Snapshot::build(*cfg);
}

int serve(const std::string& path) {
  // Credential refreshers (Vertex AI's OAuth tokens) reach the network through this, from
  // their own threads; before the first snapshot so its adapters' first fetch can succeed.
  providers::install_background_fetch(http::fetch_in_background);
  auto snap = load_snapshot(path);
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
  Server server(*snap, path);
  return server.run();
}

}  // namespace

Result<std::shared_ptr<const config::Config>> check_config_file(const std::string& path) {
  auto snap = load_snapshot(path);
  if (!snap) {
    return snap.error();
  }
  // The snapshot's own config, kept alive by it.
  return std::shared_ptr<const config::Config>(*snap, &(*snap)->config());
}

std::function<int()> add_serve_command(CLI::App& app) {
  auto path = std::make_shared<std::string>();
  CLI::App* command = app.add_subcommand("serve", "Run the gateway");
  command->add_option("-c,--config", *path, "YAML config file")->required();
  return [command, path] { return *command ? serve(*path) : -1; };
}

}  // namespace sluice::server
