#pragma once

#include <array>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "config/config.h"
#include "core/result.h"
#include "http/upstream_pool.h"
#include "providers/base_url.h"

namespace sluice::server {

// A provider ready to serve: parsed URL, connection endpoint, fixed headers.
struct ProviderRuntime {
  const config::Provider* config = nullptr;
  providers::BaseUrl url;
  std::shared_ptr<const http::UpstreamEndpoint> endpoint;    // null for the mock adapter
  std::vector<std::pair<std::string, std::string>> headers;  // auth + configured headers
};

struct RouteRuntime {
  const config::Route* config = nullptr;
  const ProviderRuntime* provider = nullptr;
  std::string model;
  config::Timeouts timeouts;  // route override merged over the provider's
};

// The immutable, compiled form of one config version that the data plane serves from.
// Built off the request path (start-up, reload); shared by all workers; never mutated.
class Snapshot {
 public:
  // Throws nothing; fails on what config validation cannot see (e.g. unreadable CA file).
  static Result<std::shared_ptr<const Snapshot>> build(std::shared_ptr<const config::Config> cfg);

  const config::Config& config() const { return *config_; }
  std::uint64_t version() const { return config_->version; }

  const RouteRuntime* find_route(std::string_view alias) const;
  // The key whose secret is `presented`, or null. Compares SHA-256 digests in constant time.
  const config::Key* authenticate(std::string_view presented) const;
  static bool key_allows(const config::Key* key, std::string_view alias);
  // Aliases `key` may call, in config order (`key` null when auth is off).
  std::vector<std::string_view> aliases_for(const config::Key* key) const;

 private:
  std::shared_ptr<const config::Config> config_;
  std::vector<std::unique_ptr<ProviderRuntime>> providers_;
  std::vector<std::unique_ptr<RouteRuntime>> routes_;
  std::unordered_map<std::string_view, const RouteRuntime*> by_alias_;
  std::unordered_map<std::string_view, const config::Key*> by_hash_;
};

// Lower-case hex SHA-256 of `text`, without heap allocation (a per-thread digest context).
// All zero bytes if OpenSSL fails, which matches no stored hash.
std::array<char, 64> sha256_hex(std::string_view text);

}  // namespace sluice::server
