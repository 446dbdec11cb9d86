#include "config/server.h"

#include "config/loader.h"

namespace sluice::config {

ServerSettings load_server(const YamlField& field) {
  const YamlMap m = field.map({"workers", "max_connections", "max_header_bytes", "max_body_bytes",
                               "idle_timeout_ms", "request_timeout_ms", "drain_timeout_ms",
                               "max_upstream_response_bytes", "strict_fields", "heartbeat_ms",
                               "reasoning_seal_key"});
  ServerSettings s;
  if (auto f = m.get("workers")) {
    s.workers = static_cast<std::uint32_t>(f->unsigned_in(0, 256));
  }
  if (auto f = m.get("max_connections")) {
    s.max_connections = static_cast<std::uint32_t>(f->unsigned_in(1, 10'000'000));
  }
  if (auto f = m.get("max_header_bytes")) {
    s.max_header_bytes = static_cast<std::uint32_t>(f->size_in(1024, 1024 * 1024));
  }
  if (auto f = m.get("max_body_bytes")) {
    s.max_body_bytes = static_cast<std::uint32_t>(f->size_in(1024, kMaxU32));
  }
  if (auto f = m.get("idle_timeout_ms")) {
    s.idle_timeout = f->millis_in(1, kMaxMillis);
  }
  if (auto f = m.get("request_timeout_ms")) {
    s.request_timeout = f->millis_in(1, kMaxMillis);
  }
  if (auto f = m.get("drain_timeout_ms")) {
    s.drain_timeout = f->millis_in(0, kMaxMillis);
  }
  if (auto f = m.get("max_upstream_response_bytes")) {
    s.max_upstream_response_bytes = static_cast<std::uint32_t>(f->size_in(1024, kMaxU32));
  }
  if (auto f = m.get("strict_fields")) {
    s.strict_fields = f->boolean();
  }
  if (auto f = m.get("heartbeat_ms")) {
    s.heartbeat = f->millis_in(0, kMaxMillis);
  }
  if (auto f = m.get("reasoning_seal_key")) {
    s.reasoning_seal_key = f->text();
    // AES-256's key is the secret's SHA-256: a short one would be guessable offline from any
    // sealed value a caller holds.
    if (s.reasoning_seal_key.size() < 32) {
      f->fail("must be at least 32 characters (e.g. `openssl rand -base64 32`)");
    }
  }
  return s;
}

}  // namespace sluice::config
