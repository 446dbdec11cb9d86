#pragma once

#include <cstdint>
#include <string>

#include "request_handler.h"
#include "stats.h"

namespace sluice::mock {

struct ServerOptions {
  // Numeric address to bind ("127.0.0.1", "::1", "0.0.0.0").
  std::string host = "127.0.0.1";
  // 0: the first acceptor picks a free port, the others bind the same one.
  std::uint16_t port = 0;
  // Worker threads, each with its own io_context and SO_REUSEPORT acceptor.
  unsigned threads = 1;
  // Both set: serve HTTPS with this PEM certificate chain and private key.
  std::string tls_cert;
  std::string tls_key;
};

// Binds, prints {"event":"listening","port":<port>,"tls":<bool>} on stdout (one line,
// flushed), and serves until SIGINT or SIGTERM; then returns 0. Throws on start-up
// failure (bad address, port in use, unreadable certificate). Blocks the calling thread,
// which becomes worker 0. `handler` and `stats` must outlive the call.
int run_server(const ServerOptions& options, const RequestHandler& handler, Stats& stats);

}  // namespace sluice::mock
