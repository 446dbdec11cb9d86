#pragma once

#include <cstdint>
#include <string>

#include "config/values.h"

namespace sluice::config {

class YamlField;

struct ServerSettings {
  std::uint32_t workers = 0;              // 0 = one per core
  std::uint32_t max_connections = 10000;  // per instance; excess accepted then closed
  std::uint32_t max_header_bytes = 16 * 1024;
  std::uint32_t max_body_bytes = 8 * 1024 * 1024;
  Millis idle_timeout{60000};     // keep-alive: between requests
  Millis request_timeout{30000};  // head + body must arrive within this
  Millis drain_timeout{30000};    // SIGTERM: let in-flight requests finish
  std::uint32_t max_upstream_response_bytes = 64 * 1024 * 1024;  // non-stream bodies
  // Translated requests carrying a field the target protocol cannot take are rejected (400
  // naming the field) instead of sent without it; passthrough is never affected.
  bool strict_fields = false;
  // A stream with nothing to send for this long gets an SSE comment (`: keep-alive`), so that
  // load balancers' idle timeouts do not cut a model that thinks for minutes. 0 = off.
  Millis heartbeat{15000};
  // Seals the upstream reasoning state translated answers hand OpenAI Responses callers
  // (encrypted_content; pipeline/reasoning_seal.h). Every instance of a fleet needs the same
  // one; "" = a random key per process. A secret: never logged or echoed.
  std::string reasoning_seal_key;
};

// `server:` (limits of the listener and of each request). Throws ConfigError.
ServerSettings load_server(const YamlField& field);

}  // namespace sluice::config
