#pragma once

#include <memory>
#include <string>
#include <vector>

#include "observability/access_log.h"
#include "pipeline/snapshot.h"
#include "server/worker.h"

namespace sluice::server {

// The data plane process: workers, signals, reload and drain.
//
// run() binds every worker to the configured address, prints one JSON line
// {"event":"listening","address":...,"port":...} to the access log stream (stdout by
// default) so scripts and tests can find the port, serves until SIGTERM/SIGINT, then
// drains: readiness fails, acceptors close, idle keep-alive connections close, in-flight
// requests get up to server.drain_timeout_ms to finish, the rest are cut (their upstream
// calls cancelled), the access log is flushed, and run() returns 0.
// SIGHUP re-reads the config file; a valid config with a higher `version` is published to
// every worker, anything else is logged and the running config keeps serving.
class Server {
 public:
  Server(std::shared_ptr<const pipeline::Snapshot> snapshot, std::string config_path);
  ~Server();
  int run();

 private:
  void reload();

  std::shared_ptr<const pipeline::Snapshot> snapshot_;
  std::string config_path_;
  SharedState shared_;
  std::unique_ptr<observability::AccessLog> access_log_;
  std::vector<std::unique_ptr<Worker>> workers_;
};

}  // namespace sluice::server
