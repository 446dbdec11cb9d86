#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "config/access_log.h"
#include "config/adapter_schema.h"
#include "config/admin.h"
#include "config/cache.h"
#include "config/guardrails.h"
#include "config/idempotency.h"
#include "config/keys.h"
#include "config/limits.h"
#include "config/metering.h"
#include "config/policy.h"
#include "config/providers.h"
#include "config/routes.h"
#include "config/routing.h"
#include "config/server.h"
#include "config/state.h"
#include "config/store.h"
#include "config/tenancy.h"
#include "config/traces.h"
#include "config/values.h"
#include "core/result.h"

// Each section's structs are declared in its own header, beside the load_<section> that
// load_from_string calls to read it (config/<section>.h); Config gathers them.
namespace sluice::config {

// The whole validated configuration. Immutable once built; shared across workers as
// std::shared_ptr<const Config>.
struct Config {
  std::uint64_t version = 0;
  ListenAddress listen;
  ServerSettings server;
  AccessLogSettings access_log;
  AdminSettings admin;
  StoreSettings store;
  MeteringSettings metering;
  TraceSettings traces;
  RoutingSettings routing;
  StateSettings state;
  LimitSettings limits;
  TenancySettings tenancy;
  CacheConfig cache;
  IdempotencySettings idempotency;
  GuardrailsConfig guardrails;
  bool require_auth = true;  // `auth: none` in config turns it off (local development)
  std::vector<Provider> providers;
  std::vector<Route> routes;
  std::vector<Key> keys;
  std::string source_path;
  // Human-readable notes produced while loading (e.g. "provider openai skipped: OPENAI_API_KEY
  // is not set"). Not errors.
  std::vector<std::string> notes;
};

struct LoadOptions {
  // Lookup for ${VAR} interpolation; defaults to the process environment.
  std::function<std::optional<std::string>(const std::string&)> getenv;
  // The adapter kinds a provider may name, with their options. Callers pass
  // providers::adapter_schemas(); with none, every provider is an error.
  std::span<const AdapterSchema> adapters;
};

// Parses and strictly validates YAML text. `source_name` names the file in messages.
// Every error message starts with "<source_name>:<line>:<column>: ". Throws nothing.
Result<std::shared_ptr<const Config>> load_from_string(const std::string& yaml_text,
                                                       const std::string& source_name,
                                                       const LoadOptions& options = {});
// Reads the file, then load_from_string.
Result<std::shared_ptr<const Config>> load_from_file(const std::string& path,
                                                     const LoadOptions& options = {});

}  // namespace sluice::config
