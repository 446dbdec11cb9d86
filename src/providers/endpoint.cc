#include "providers/endpoint.h"

#include "providers/base_url.h"

namespace sluice::providers {
namespace ssl = boost::asio::ssl;

Result<std::shared_ptr<const Endpoint>> make_endpoint(const config::Provider& p,
                                                      const BaseUrl& url) {
  auto ep = std::make_shared<Endpoint>();
  ep->provider_id = p.id;
  ep->host = url.host;
  ep->port = url.port;
  ep->tls = url.tls;
  ep->server_name = p.tls.server_name.empty() ? url.host : p.tls.server_name;
  ep->pool = p.pool;
  if (ep->tls) {
    try {
      ep->ssl = make_client_tls_context(p.tls);
    } catch (const std::exception& e) {
      return Error(ErrorKind::kBadRequest,
                   p.source + ": provider " + p.id + ": TLS setup failed: " + e.what());
    }
  }
  ep->fingerprint = p.base_url + "|" + p.tls.ca_file + "|" + p.tls.server_name + "|" +
                    (p.tls.verify ? "v" : "n") + "|" + std::to_string(p.pool.max_connections) +
                    "|" + std::to_string(p.pool.acquire_timeout.count()) + "|" +
                    std::to_string(p.pool.idle_timeout.count());
  return std::shared_ptr<const Endpoint>(std::move(ep));
}

std::shared_ptr<ssl::context> make_client_tls_context(const config::TlsSettings& tls) {
  auto ctx = std::make_shared<ssl::context>(ssl::context::tls_client);
  ctx->set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 |
                   ssl::context::no_sslv3 | ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1);
  if (tls.ca_file.empty()) {
    ctx->set_default_verify_paths();
  } else {
    ctx->load_verify_file(tls.ca_file);
  }
  ctx->set_verify_mode(tls.verify ? ssl::verify_peer : ssl::verify_none);
  return ctx;
}

}  // namespace sluice::providers
