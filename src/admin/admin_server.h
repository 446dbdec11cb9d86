#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <list>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>

#include "admin/router.h"
#include "config/config.h"
#include "http/net.h"

namespace sluice::admin {

struct AdminLimits {
  std::uint32_t max_header_bytes = 16 * 1024;
  std::uint32_t max_body_bytes = 1024 * 1024;
  // A connection waiting for (or sending) its next request is closed after this.
  std::chrono::milliseconds read_timeout{30000};
  // A client that stops reading its answer is cut after this.
  std::chrono::milliseconds write_timeout{30000};
  // Until a connection has shown the admin credential, each request head must arrive within
  // this (and its body too): an idle or trickling socket cannot hold a slot for read_timeout.
  // Public scrapers and health checks simply reconnect.
  std::chrono::milliseconds unauthenticated_timeout{5000};
  std::uint32_t max_connections = 64;  // more are answered 503 and closed
  // Connections from one peer address at once: beyond it the peer is answered 503 and closed,
  // so one client cannot take every slot (behind a proxy every client is one peer: keep the
  // admin listener off shared addresses).
  std::uint32_t max_connections_per_peer = 16;
  // stop(): how long requests in progress may take to finish before the thread is stopped.
  std::chrono::milliseconds stop_timeout{5000};
};

// The control-plane listener (admin.listen): its own address, its own thread and io_context,
// never a data-plane worker's. HTTP/1.1 with keep-alive; every answer JSON unless a handler
// says otherwise (GET /metrics answers the Prometheus text format).
//
// Authentication: `Authorization: Bearer <admin key>`, whose SHA-256 is compared in constant
// time with admin.key_sha256. Gateway (model) keys are a different credential and get 401 like
// any other wrong key. Routes and their access come from the Router (router.h).
class AdminServer {
 public:
  AdminServer(const Router& router, config::AdminSettings settings, AdminLimits limits = {});
  ~AdminServer();  // stop()
  AdminServer(const AdminServer&) = delete;
  AdminServer& operator=(const AdminServer&) = delete;

  // Start-up, before start(): binds settings.listen and returns the bound port (0 in the
  // config picks a free one). Throws std::system_error when the address cannot be bound.
  std::uint16_t bind();
  // Starts the admin thread.
  void start();
  // Any thread: stop accepting, close idle connections, let requests in progress finish (up to
  // limits.stop_timeout), then join the thread. Idempotent.
  void stop();
  // Any thread: a reloaded config's credential and metrics_public (the address stays: changing
  // admin.listen needs a restart).
  void update(const config::AdminSettings& settings);

  // Whether an Authorization header value carries the admin credential. Any thread.
  bool authorized(std::string_view authorization) const;
  // Dispatches one request (routing, access check, handler, JSON errors). Admin thread; public
  // for tests.
  Response handle(const Request& request) const;

 private:
  struct Connection;
  http::Awaitable<void> accept_loop();
  http::Awaitable<void> serve(http::tcp::socket socket, http::net::ip::address peer);
  std::uint32_t connections_from(const http::net::ip::address& peer) const;
  void finish_stop();

  const Router& router_;
  AdminLimits limits_;
  mutable std::mutex settings_mu_;
  config::AdminSettings settings_;
  http::net::io_context ioc_{1};
  http::tcp::acceptor acceptor_{ioc_};
  http::net::steady_timer stop_deadline_{ioc_};
  std::list<Connection*> connections_;  // admin thread only
  bool stopping_ = false;               // admin thread only
  std::atomic<bool> stopped_{false};
  std::thread thread_;
};

}  // namespace sluice::admin
