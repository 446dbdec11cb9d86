#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include <boost/asio/ssl/context.hpp>

#include "config/config.h"
#include "core/result.h"
#include "providers/base_url.h"

namespace sluice::providers {

// Where and how to connect for one network provider; built once per config snapshot by the
// provider's adapter and shared read-only by every worker, whose connection pools
// (http/upstream_pool.h) use it.
struct Endpoint {
  std::string provider_id;
  std::string host;
  std::uint16_t port = 0;
  bool tls = false;
  std::string server_name;                         // SNI and certificate name
  std::shared_ptr<boost::asio::ssl::context> ssl;  // set when tls
  config::PoolSettings pool;
  // Identity of the settings above; a worker rebuilds its pool when it changes across reloads.
  std::string fingerprint;
};

// The endpoint for `url` with the provider's TLS and pool settings. Fails (kBadRequest, message
// prefixed with the provider's source location) when the TLS context cannot be built, e.g. an
// unreadable CA file.
Result<std::shared_ptr<const Endpoint>> make_endpoint(const config::Provider& provider,
                                                      const BaseUrl& url);

// TLS 1.2+, peer verification against the system store or `ca_file`. Throws on unreadable CA
// files (config load time only).
std::shared_ptr<boost::asio::ssl::context> make_client_tls_context(const config::TlsSettings& tls);

}  // namespace sluice::providers
