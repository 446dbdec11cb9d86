#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "faults.h"
#include "mock_request.h"
#include "prompt_cache.h"
#include "reply.h"
#include "responses_responder.h"
#include "stats.h"

namespace sluice::mock {

// Run-wide settings from the command line.
struct MockConfig {
  // --fixtures: where x-mock-fixture names are looked up; empty means "no fixtures".
  std::string fixtures_dir;
  // --latency-ms, --status, ...: faults applied when a request has no x-mock-* override.
  Faults defaults;
};

// Turns requests into replies. Pure logic, no I/O except reading fixture files; safe to
// call from several threads at once (shared state lives in Stats and the ResponseStore).
class RequestHandler {
 public:
  // `stats` must outlive the handler.
  RequestHandler(MockConfig config, Stats& stats);

  Reply handle(const MockRequest& request) const;

  const MockConfig& config() const { return config_; }

 private:
  Reply handle_control(const MockRequest& request) const;
  Reply handle_api(const MockRequest& request, const Faults& faults, std::uint64_t number) const;

  MockConfig config_;
  Stats& stats_;
  // Responses API objects for GET …/responses/{id}; /_mock/reset empties it.
  mutable ResponseStore responses_;
  // The simulated prompt caches of x-mock-prompt-cache; /_mock/reset empties them.
  mutable PromptCache prompt_cache_;
};

}  // namespace sluice::mock
