#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "config/interpolate.h"
#include "config/values.h"

namespace sluice::config {

class AdapterCatalog;
class YamlField;
struct LoadState;

struct Timeouts {
  Millis connect{2000};      // resolve + TCP connect + TLS handshake
  Millis first_byte{60000};  // request fully sent -> response head received
  // Longest silence between two reads of the response body once it started. A stream that
  // stalls mid-answer fails after this, long before `total`. Reasoning models can think for
  // minutes between chunks, hence the generous default.
  Millis idle{300000};
  Millis total{600000};  // whole upstream exchange, streams included
};

struct PoolSettings {
  // Upper bound on open upstream connections to this provider for the whole instance, shared
  // by its workers (a busy worker may use what the others leave free). A streaming answer holds
  // its connection for its whole length, so the default allows thousands of streams.
  std::uint32_t max_connections = 10000;
  // How long a request waits for a free connection before it is shed with 429.
  Millis acquire_timeout{100};
  // Idle keep-alive connections older than this are closed instead of reused.
  Millis idle_timeout{30000};
};

struct TlsSettings {
  bool verify = true;       // never disabled by default; `false` only for labs
  std::string ca_file;      // PEM bundle; empty = system CA store
  std::string server_name;  // SNI / verification name override; empty = URL host
};

struct Provider {
  std::string id;
  std::string adapter;  // AdapterSchema::name
  // Network adapters: scheme://host[:port][/path-prefix] as configured (normalised), or empty
  // for the adapter's default.
  std::string base_url;
  std::string api_key;  // secret: never logged, never serialised back out
  // Extra headers sent on every upstream request (e.g. OpenAI-Organization).
  std::map<std::string, std::string> headers;
  // Caller headers copied to the upstream request. Exact lower-case names or prefixes
  // ending in '*' (e.g. "x-mock-*"). Authorization and hop-by-hop headers never pass.
  std::vector<std::string> forward_headers;
  PoolSettings pool;
  Timeouts timeout;
  TlsSettings tls;
  // The adapter's own options that were set, by AdapterOption::name, as validated text:
  // decimal for numbers and durations (milliseconds), "true"/"false", the choice as written.
  std::map<std::string, std::string, std::less<>> options;
  // Where this provider was defined ("file.yaml:12"), for messages.
  std::string source;

  // An option's value, or nullptr when it was not set.
  const std::string* option(std::string_view name) const {
    auto it = options.find(name);
    return it == options.end() ? nullptr : &it->second;
  }
};

// Caller headers that must never reach an upstream, whatever forward_headers says: the
// caller's credentials (Authorization, and x-api-key / api-key which the gateway also accepts
// as key headers), cookies, and the framing and hop-by-hop headers the gateway sets itself.
// `name` is compared case-insensitively.
bool never_forwarded(std::string_view name);
std::span<const std::string_view> never_forwarded_headers();

// One `providers[]` entry, checked against its adapter's schema, declared in `declared`
// whether it is active or not. nullopt when a `requires_env` variable is unset or empty (the
// provider is skipped, a note says why). Throws ConfigError; messages never show api_key or
// header values.
std::optional<Provider> load_provider(const YamlField& field, const AdapterCatalog& adapters,
                                      const EnvLookup& getenv, LoadState& declared);

// A `timeout:` block over `base` (fields not given keep base's values). `check` (first_byte_ms
// within total_ms) is false where base is unknown: a skipped provider's.
Timeouts load_timeouts(const YamlField& field, Timeouts base, bool check = true);

}  // namespace sluice::config
