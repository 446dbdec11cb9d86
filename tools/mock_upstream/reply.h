#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "event_source.h"
#include "faults.h"

namespace sluice::mock {

// What a connection must send for one request. The connection applies the timing and
// failure faults (latency, first byte, pace, stall, disconnect); everything else is decided
// by the request handler and the responders.
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

// A 200 reply with this body and content type.
inline Reply body_reply(std::string body, std::string_view content_type = "application/json") {
  Reply r;
  r.content_type = content_type;
  r.body = std::move(body);
  return r;
}

// A 200 chunked reply streaming these events.
inline Reply stream_reply(std::unique_ptr<EventSource> events,
                          std::string_view content_type = "text/event-stream") {
  Reply r;
  r.content_type = content_type;
  r.stream = std::move(events);
  return r;
}

}  // namespace sluice::mock
