#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "core/error.h"
#include "ir/usage.h"

namespace sluice::config {
struct Key;
}

namespace sluice::server {

class Snapshot;

// How the model call ended, as opposed to the HTTP status the caller got (a stream that
// broke after its 200 head is status 200, outcome upstream_failed_midstream).
enum class Outcome {
  kNone,            // no model call (health checks, rejected requests)
  kComplete,        // the model finished (finish_reason seen / [DONE])
  kTruncated,       // finish_reason "length"
  kClientGone,      // the caller disconnected; the upstream call was cancelled
  kUpstreamError,   // failed before anything was sent to the caller
  kMidstreamError,  // failed after the stream had started
};

const char* to_string(Outcome outcome);

// The API shape the caller speaks; errors and answers are encoded in it.
enum class Dialect : std::uint8_t { kOpenAI, kAnthropic };

// Everything known about one request; filled by the pipeline stages and reported in the
// access log at the end.
struct RequestContext {
  using Clock = std::chrono::steady_clock;
  Clock::time_point started = Clock::now();
  // The config version this request is served from, pinned for its whole life.
  std::shared_ptr<const Snapshot> snapshot;
  const config::Key* key = nullptr;  // authenticated gateway key (null when auth is off)
  std::string request_id;
  std::string method;
  std::string path;
  Dialect dialect = Dialect::kOpenAI;
  int status = 0;
  std::string key_name;
  std::string alias;
  std::string provider;
  std::string model;
  bool stream = false;
  Outcome outcome = Outcome::kNone;
  std::optional<Error> error;
  std::optional<ir::Usage> usage;
  std::string finish_reason;
  int attempts = 0;
  std::uint64_t bytes_in = 0;
  std::uint64_t bytes_out = 0;
  std::uint64_t events = 0;
  // Request fields the ingress codec ignored because the IR cannot carry them (schema drift:
  // a client sending something new). Logged when non-zero.
  std::uint32_t ignored_fields = 0;
  std::chrono::microseconds upstream_acquire{-1};
  std::chrono::microseconds upstream_first_byte{-1};
  std::chrono::microseconds first_token{-1};  // since `started`, streams only
  bool reused_connection = false;
};

// One JSON line; never contains prompt text or credentials.
std::string format_access_log(const RequestContext& ctx);

}  // namespace sluice::server
