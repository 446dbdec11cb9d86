#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "event_source.h"
#include "faults.h"
#include "mock_request.h"
#include "stats.h"

namespace sluice::mock {

// Run-wide settings from the command line.
struct MockConfig {
  // --fixtures: where x-mock-fixture names are looked up; empty means "no fixtures".
  std::string fixtures_dir;
  // --latency-ms, --status, ...: faults applied when a request has no x-mock-* override.
  Faults defaults;
};

// What a connection must send for one request. The connection applies the timing and
// failure faults (latency, first byte, pace, stall, disconnect); everything else is decided
// here.
struct Reply {
  int status = 200;
  std::string content_type = "application/json";
  // Pre-formatted "Name: value\r\n" lines for the final head (Retry-After, x-mock-set-*).
  std::string extra_headers;
  // The body of a non-stream reply.
  std::string body;
  // Non-null: a chunked stream of these events instead of `body`.
  std::unique_ptr<EventSource> stream;
  // Bytes to write right after the complete reply, in the same write as its last bytes
  // (x-mock-trailing-response). Not sent when the reply is cut or stalled.
  std::string trailing;
  // The faults in effect. Default-constructed (no delays) for /_mock/* and for requests
  // rejected for a malformed x-mock-* header.
  Faults faults;
  // Value of x-mock-request-number; 0 for /_mock/* requests, which are not counted.
  std::uint64_t request_number = 0;
};

// Turns requests into replies. Pure logic, no I/O except reading fixture files; safe to
// call from several threads at once (shared state lives in Stats).
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
};

}  // namespace sluice::mock
