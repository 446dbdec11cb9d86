#pragma once

#include "pipeline/upstream_connector.h"

namespace sluice::server {

class Worker;

// The worker's pipeline::UpstreamConnector: network providers go through the worker's
// connection pools (http/upstream_call.h), in-process providers (the mock) answer directly.
class WorkerConnector final : public pipeline::UpstreamConnector {
 public:
  explicit WorkerConnector(Worker& worker) : worker_(worker) {}

  boost::asio::awaitable<Result<std::unique_ptr<providers::Exchange>>> open(
      const pipeline::FramedRequest& request, providers::Cancellation& cancel) override;

 private:
  Worker& worker_;
};

// The worker's pipeline::Sleeper: a timer on the worker's io_context, stopped by cancellation.
class WorkerSleeper final : public pipeline::Sleeper {
 public:
  explicit WorkerSleeper(Worker& worker) : worker_(worker) {}

  boost::asio::awaitable<bool> sleep(std::chrono::milliseconds duration,
                                     providers::Cancellation& cancel) override;

 private:
  Worker& worker_;
};

}  // namespace sluice::server
