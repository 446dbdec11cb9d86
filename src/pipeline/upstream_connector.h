#pragma once

#include <chrono>
#include <memory>
#include <string>

#include <boost/asio/awaitable.hpp>

#include "config/config.h"
#include "core/result.h"
#include "protocol/ingress.h"
#include "providers/exchange.h"

namespace sluice::pipeline {

struct ProviderRuntime;

// One framed upstream request, ready to send: what the connector needs of an attempt
// (pipeline/upstream_request.h owns it).
struct FramedRequest {
  const ProviderRuntime* provider = nullptr;
  protocol::Operation operation = protocol::Operation::kChat;
  bool stream = false;
  std::string head;  // complete HTTP/1.1 head written by the provider's adapter
  std::string body;
  config::Timeouts timeouts;
};

// Opens upstream exchanges for the pipeline: over the worker's connection pools for network
// providers, in process for the others. The server implements it per worker; the pipeline's
// unit tests implement it with scripted exchanges, so no socket is involved.
//
// open() completes on the worker's executor with the response head read (or the error that
// prevented it). A request that was written completely is never re-sent by open(); only a
// write that failed on a reused keep-alive connection is retried on a fresh one. `cancel`
// aborts the exchange at any point (its handler is replaced once open() returns).
class UpstreamConnector {
 public:
  virtual ~UpstreamConnector() = default;
  virtual boost::asio::awaitable<Result<std::unique_ptr<providers::Exchange>>> open(
      const FramedRequest& request, providers::Cancellation& cancel) = 0;
};

// Waits between attempts (retry backoff) on the worker's executor. The server implements it
// with a timer; the pipeline's unit tests advance a SimulatedClock instead of waiting.
class Sleeper {
 public:
  virtual ~Sleeper() = default;
  // False when `cancel` fired (the caller went away) before the time was up.
  virtual boost::asio::awaitable<bool> sleep(std::chrono::milliseconds duration,
                                             providers::Cancellation& cancel) = 0;
};

}  // namespace sluice::pipeline
