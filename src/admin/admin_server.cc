#include "admin/admin_server.h"

#include <boost/asio/post.hpp>
#include <boost/beast/core/string.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>
#include <openssl/crypto.h>

#include "codec/http_tokens.h"
#include "codec/request_id.h"
#include "config/scalars.h"
#include "core/thread_name.h"
#include "spdlog/spdlog.h"

namespace sluice::admin {

namespace net = http::net;
namespace beast = http::beast;
namespace bhttp = boost::beast::http;
using http::use_nothrow;

struct AdminServer::Connection {
  beast::tcp_stream* stream = nullptr;
  net::ip::address peer;
  bool busy = false;           // between a request's first byte... and its answer written
  bool authenticated = false;  // a request carried the admin credential
};

namespace {

std::string_view sv(boost::beast::string_view s) { return {s.data(), s.size()}; }

// Answers 503 on a socket the listener will not serve and closes it, without waiting: a client
// that does not read the answer loses nothing but it.
void refuse(http::tcp::socket& socket, std::string_view message) {
  const std::string body =
      R"({"error":{"code":"connection_limit","message":")" + std::string(message) + R"("}})";
  const std::string answer =
      "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\n"
      "Connection: close\r\nContent-Length: " +
      std::to_string(body.size()) + "\r\n\r\n" + body;
  boost::system::error_code ignored;
  socket.non_blocking(true, ignored);
  socket.send(net::buffer(answer), 0, ignored);
  socket.close(ignored);
}

Response unauthorized(std::string_view message) {
  Response r = Response::error(401, "unauthorized", message);
  r.headers.emplace_back("WWW-Authenticate", "Bearer realm=\"sluice-admin\"");
  return r;
}

}  // namespace

AdminServer::AdminServer(const Router& router, config::AdminSettings settings, AdminLimits limits)
    : router_(router), limits_(limits), settings_(std::move(settings)) {}

AdminServer::~AdminServer() { stop(); }

std::uint16_t AdminServer::bind() {
  const config::ListenAddress& listen = settings_.listen;
  boost::system::error_code ec;
  const auto address = net::ip::make_address(listen.host, ec);
  if (ec) {
    throw std::system_error(ec, "admin.listen " + listen.host + " is not an IP address");
  }
  const http::tcp::endpoint endpoint(address, listen.port);
  acceptor_.open(endpoint.protocol());
  acceptor_.set_option(net::socket_base::reuse_address(true));
  acceptor_.bind(endpoint);
  acceptor_.listen(net::socket_base::max_listen_connections);
  return acceptor_.local_endpoint().port();
}

void AdminServer::start() {
  net::co_spawn(ioc_, accept_loop(), [](std::exception_ptr e) {
    if (e) {
      try {
        std::rethrow_exception(e);
      } catch (const std::exception& ex) {
        spdlog::error("admin listener: accept loop failed: {}", ex.what());
      }
    }
  });
  thread_ = std::thread([this] {
    name_this_thread("admin");
    ioc_.run();
  });
}

void AdminServer::stop() {
  if (stopped_.exchange(true)) {
    return;
  }
  if (!thread_.joinable()) {
    return;
  }
  net::post(ioc_, [this] {
    stopping_ = true;
    boost::system::error_code ignored;
    acceptor_.close(ignored);
    for (Connection* c : connections_) {
      if (!c->busy) {
        c->stream->socket().cancel(ignored);
      }
    }
    stop_deadline_.expires_after(limits_.stop_timeout);
    stop_deadline_.async_wait([this](boost::system::error_code ec) {
      if (!ec) {
        spdlog::warn("admin listener: requests still running at stop; cutting them");
        ioc_.stop();
      }
    });
    finish_stop();
  });
  thread_.join();
}

// Once stopping and the last connection is gone, nothing keeps the io_context running.
void AdminServer::finish_stop() {
  if (stopping_ && connections_.empty()) {
    stop_deadline_.cancel();
  }
}

void AdminServer::update(const config::AdminSettings& settings) {
  std::lock_guard lock(settings_mu_);
  settings_.key_sha256 = settings.key_sha256;
  settings_.metrics_public = settings.metrics_public;
  settings_.metrics_on_main = settings.metrics_on_main;
}

bool AdminServer::authorized(std::string_view authorization) const {
  authorization = codec::trim_ows(authorization);
  constexpr std::string_view kScheme = "bearer ";
  if (authorization.size() <= kScheme.size() ||
      !boost::beast::iequals(authorization.substr(0, kScheme.size()), kScheme)) {
    return false;
  }
  const std::string presented =
      config::sha256_hex(codec::trim_ows(authorization.substr(kScheme.size())));
  std::string expected;
  {
    std::lock_guard lock(settings_mu_);
    expected = settings_.key_sha256;
  }
  // Digests of equal length; CRYPTO_memcmp takes the same time wherever they differ.
  return expected.size() == presented.size() && !expected.empty() &&
         CRYPTO_memcmp(expected.data(), presented.data(), expected.size()) == 0;
}

Response AdminServer::handle(const Request& request) const {
  std::string allowed;
  const std::optional<Router::Match> match = router_.find(request.method, request.path, &allowed);
  if (!match) {
    if (!allowed.empty()) {
      Response r = Response::error(405, "method_not_allowed",
                                   "use " + allowed + " for " + std::string(request.path));
      r.headers.emplace_back("Allow", allowed);
      return r;
    }
    return Response::error(404, "not_found",
                           "no such admin endpoint: " + std::string(request.path));
  }
  bool needs_key = match->access == Access::kAdmin;
  if (match->access == Access::kMetrics) {
    std::lock_guard lock(settings_mu_);
    needs_key = !settings_.metrics_public;
  }
  if (needs_key) {
    const std::string_view authorization = request.header("authorization");
    if (authorization.empty()) {
      return unauthorized("missing admin credential: send 'Authorization: Bearer <admin key>'");
    }
    if (!authorized(authorization)) {
      return unauthorized("invalid admin credential");
    }
  }
  try {
    if (!match->path_params.empty()) {
      Request routed = request;
      routed.path_params = match->path_params;
      return match->handler(routed);
    }
    return match->handler(request);
  } catch (const std::exception& e) {
    spdlog::error("admin {} {}: handler failed: {}", request.method, request.path, e.what());
    return Response::error(500, "internal_error", "the handler failed; see the server log");
  }
}

http::Awaitable<void> AdminServer::accept_loop() {
  for (;;) {
    auto [ec, socket] = co_await acceptor_.async_accept(use_nothrow);
    if (ec) {
      if (ec == net::error::operation_aborted || !acceptor_.is_open()) {
        co_return;
      }
      spdlog::warn("admin listener: accept failed: {}", ec.message());
      net::steady_timer t(ioc_, std::chrono::milliseconds(50));
      co_await t.async_wait(use_nothrow);
      continue;
    }
    if (connections_.size() >= limits_.max_connections) {
      refuse(socket, "too many admin connections");
      continue;
    }
    boost::system::error_code peer_ec;
    const net::ip::address peer = socket.remote_endpoint(peer_ec).address();
    if (peer_ec) {
      continue;  // already gone
    }
    if (connections_from(peer) >= limits_.max_connections_per_peer) {
      refuse(socket, "too many admin connections from this address");
      continue;
    }
    net::co_spawn(ioc_, serve(std::move(socket), peer), [](std::exception_ptr e) {
      if (e) {
        try {
          std::rethrow_exception(e);
        } catch (const std::exception& ex) {
          spdlog::error("admin listener: connection failed: {}", ex.what());
        }
      }
    });
  }
}

std::uint32_t AdminServer::connections_from(const net::ip::address& peer) const {
  std::uint32_t n = 0;
  for (const Connection* c : connections_) {
    n += c->peer == peer ? 1 : 0;
  }
  return n;
}

http::Awaitable<void> AdminServer::serve(http::tcp::socket socket, net::ip::address peer) {
  beast::tcp_stream stream(std::move(socket));
  beast::flat_buffer buffer;
  Connection conn{&stream, peer};
  const auto registration = connections_.insert(connections_.end(), &conn);
  struct Unregister {
    AdminServer& server;
    std::list<Connection*>::iterator it;
    ~Unregister() {
      server.connections_.erase(it);
      server.finish_stop();
    }
  } unregister{*this, registration};

  while (!stopping_) {
    conn.busy = false;
    bhttp::request_parser<bhttp::string_body> parser;
    parser.header_limit(limits_.max_header_bytes);
    parser.body_limit(limits_.max_body_bytes);
    // A connection that never showed the credential gets seconds for its head, and keeps that
    // deadline for its body: it cannot hold a slot by trickling either.
    stream.expires_after(conn.authenticated ? limits_.read_timeout
                                            : limits_.unauthenticated_timeout);
    auto [ec, n] = co_await bhttp::async_read_header(stream, buffer, parser, use_nothrow);
    conn.busy = true;
    if (!ec && !conn.authenticated) {
      const auto it = parser.get().find(bhttp::field::authorization);
      conn.authenticated = it != parser.get().end() && authorized(sv(it->value()));
      if (conn.authenticated) {
        stream.expires_after(limits_.read_timeout);
      }
    }
    if (!ec && !parser.is_done()) {
      auto [body_ec, body_n] = co_await bhttp::async_read(stream, buffer, parser, use_nothrow);
      ec = body_ec;
    }
    Response response;
    bool keep_alive = false;
    bhttp::request<bhttp::string_body> message;
    if (ec == bhttp::error::body_limit) {
      response = Response::error(413, "request_too_large",
                                 "admin request bodies are limited to " +
                                     std::to_string(limits_.max_body_bytes) + " bytes");
    } else if (ec == bhttp::error::header_limit) {
      response = Response::error(431, "headers_too_large", "request head too large");
    } else if (ec == bhttp::error::bad_method || ec == bhttp::error::bad_target ||
               ec == bhttp::error::bad_version || ec == bhttp::error::bad_field ||
               ec == bhttp::error::bad_value || ec == bhttp::error::bad_line_ending) {
      response = Response::error(400, "bad_http_request", "malformed HTTP request");
    } else if (ec) {
      break;  // closed, timed out, cancelled by stop()
    } else {
      message = parser.release();
      keep_alive = message.keep_alive();
      const std::string_view target = sv(message.target());
      const std::size_t q = target.find('?');
      Request request;
      request.method = sv(message.method_string());
      request.path = target.substr(0, q);
      request.query = q == std::string_view::npos ? std::string_view() : target.substr(q + 1);
      request.params = parse_query(request.query);
      request.body = message.body();
      request.header = [&message](std::string_view name) -> std::string_view {
        const auto it = message.find(boost::beast::string_view(name.data(), name.size()));
        if (it == message.end()) {
          return {};
        }
        const std::string_view value = sv(it->value());
        // Handlers echo it and write it to the audit log: the data plane's rule, or none (the
        // handler then makes its own).
        if (boost::beast::iequals(name, "x-request-id") && !codec::acceptable_request_id(value)) {
          return {};
        }
        return value;
      };
      response = handle(request);
    }
    bhttp::response<bhttp::string_body> res(static_cast<bhttp::status>(response.status), 11);
    res.set(bhttp::field::content_type, response.content_type);
    res.set(bhttp::field::cache_control, "no-store");
    for (const auto& [name, value] : response.headers) {
      res.set(name, value);
    }
    res.body() = std::move(response.body);
    res.keep_alive(keep_alive && !stopping_);
    res.prepare_payload();
    stream.expires_after(limits_.write_timeout);
    auto [wec, wn] = co_await bhttp::async_write(stream, res, use_nothrow);
    if (wec || !res.keep_alive()) {
      break;
    }
  }
  boost::system::error_code ignored;
  stream.socket().shutdown(net::socket_base::shutdown_both, ignored);
  stream.socket().close(ignored);
}

}  // namespace sluice::admin
