#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <span>
#include <string>

#include "config/keys.h"
#include "config/values.h"

namespace sluice::config {

class YamlField;
struct LoadState;

// Rate limits of one layer (a key, a key group, a model alias, a provider): requests and
// tokens per minute, and concurrent requests (key groups and the instance only). 0 = no limit.
// A limit of N per minute is a token bucket of N that refills continuously (N/60 a second), so a
// caller may burst up to N at once and then gets a steady N a minute.
struct RateLimits {
  std::uint64_t rpm = 0;
  std::uint64_t tpm = 0;
  std::uint32_t concurrency = 0;
  std::string source;  // "<file>:<line>"
  bool any() const { return rpm != 0 || tpm != 0 || concurrency != 0; }
};

// The `limits:` section: RPM, TPM and concurrency per key, key group, model alias and
// provider, checked at admission (docs/tenancy.md).
struct LimitSettings {
  RateLimits key;  // every key that has no entry of its own in `keys`
  std::map<std::string, RateLimits, std::less<>> keys;       // by key name
  std::map<std::string, RateLimits, std::less<>> groups;     // by key group
  std::map<std::string, RateLimits, std::less<>> models;     // by alias
  std::map<std::string, RateLimits, std::less<>> providers;  // by provider id (capacity)
  std::uint32_t instance_concurrency = 0;  // requests in admission..finish, this instance
  // A concurrency slot is a lease: if an instance dies holding it, it frees itself after this.
  Millis lease_ttl{300000};
  bool any() const {
    return key.any() || !keys.empty() || !groups.empty() || !models.empty() || !providers.empty() ||
           instance_concurrency != 0;
  }
};

// `limits:` (RPM, TPM and concurrency per key, key group, alias and provider). Read after
// keys, routes and providers, which it names: a name must be a key in `keys` (any name when
// `tenancy_enabled`: store keys are not known here) or a declared alias or provider. Throws
// ConfigError.
LimitSettings load_limits(const YamlField& field, std::span<const Key> keys, bool tenancy_enabled,
                          const LoadState& declared);

}  // namespace sluice::config
