#include "admin/admin_server.h"

#include <chrono>
#include <string>
#include <vector>

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "admin/router.h"
#include "config/scalars.h"

namespace sluice::admin {
namespace {

constexpr std::string_view kAdminKey = "admin-key-0123456789abcdef-xyz";

Request make_request(std::string_view method, std::string_view path,
                     std::string authorization = "") {
  Request r;
  r.method = method;
  r.path = path;
  r.header = [authorization](std::string_view name) -> std::string_view {
    return name == "authorization" ? std::string_view(authorization) : std::string_view();
  };
  return r;
}

config::AdminSettings settings(bool metrics_public = false) {
  config::AdminSettings s;
  s.enabled = true;
  s.key_sha256 = config::sha256_hex(kAdminKey);
  s.metrics_public = metrics_public;
  return s;
}

void add_test_routes(Router& router) {
  router.add("GET", "/metrics", Access::kMetrics, [](const Request&) {
    Response r;
    r.content_type = "text/plain";
    r.body = "m 1\n";
    return r;
  });
  router.add("GET", "/healthz", Access::kPublic,
             [](const Request&) { return Response::json(R"({"status":"ok"})"); });
  router.add("GET", "/admin/v1/echo", Access::kAdmin, [](const Request& req) {
    return Response::json(std::string(req.param("by").value_or("none")));
  });
  router.add("POST", "/admin/v1/throw", Access::kAdmin,
             [](const Request&) -> Response { throw std::runtime_error("boom"); });
}

TEST(AdminQuery, SplitsAndDecodes) {
  const auto params = parse_query("by=key&from=2026-01-01T00%3A00%3A00Z&x&name=a+b&&bad=%zz");
  ASSERT_EQ(params.size(), 5u);
  EXPECT_EQ(params[0].name, "by");
  EXPECT_EQ(params[0].value, "key");
  EXPECT_EQ(params[1].value, "2026-01-01T00:00:00Z");
  EXPECT_EQ(params[2].name, "x");
  EXPECT_EQ(params[2].value, "");
  EXPECT_EQ(params[3].value, "a b");
  EXPECT_EQ(params[4].value, "%zz");
  EXPECT_TRUE(parse_query("").empty());
}

TEST(AdminServer, CredentialIsTheAdminKeyOnly) {
  Router router;
  add_test_routes(router);
  AdminServer server(router, settings());
  EXPECT_TRUE(server.authorized("Bearer " + std::string(kAdminKey)));
  EXPECT_TRUE(server.authorized("bearer   " + std::string(kAdminKey) + " "));
  EXPECT_FALSE(server.authorized(std::string(kAdminKey)));  // no scheme
  EXPECT_FALSE(server.authorized("Basic " + std::string(kAdminKey)));
  EXPECT_FALSE(server.authorized("Bearer sk-sluice-model-key-000000001"));
  EXPECT_FALSE(server.authorized("Bearer "));
}

TEST(AdminServer, MetricsNeedTheCredentialUnlessPublic) {
  Router router;
  add_test_routes(router);
  AdminServer server(router, settings());
  EXPECT_EQ(server.handle(make_request("GET", "/metrics")).status, 401);
  const Response wrong = server.handle(make_request("GET", "/metrics", "Bearer model-key-123"));
  EXPECT_EQ(wrong.status, 401);
  EXPECT_NE(wrong.body.find("\"code\":\"unauthorized\""), std::string::npos) << wrong.body;
  EXPECT_EQ(wrong.headers.at(0).first, "WWW-Authenticate");
  const Response ok =
      server.handle(make_request("GET", "/metrics", "Bearer " + std::string(kAdminKey)));
  EXPECT_EQ(ok.status, 200);
  EXPECT_EQ(ok.body, "m 1\n");
  server.update(settings(/*metrics_public=*/true));
  EXPECT_EQ(server.handle(make_request("GET", "/metrics")).status, 200);
  EXPECT_EQ(server.handle(make_request("GET", "/admin/v1/echo")).status, 401);
}

TEST(AdminServer, RoutingErrorsAreJson) {
  Router router;
  add_test_routes(router);
  AdminServer server(router, settings());
  EXPECT_EQ(server.handle(make_request("GET", "/healthz")).status, 200);
  const Response missing = server.handle(make_request("GET", "/nope"));
  EXPECT_EQ(missing.status, 404);
  EXPECT_EQ(missing.content_type, "application/json");
  const Response method = server.handle(make_request("POST", "/metrics"));
  EXPECT_EQ(method.status, 405);
  EXPECT_EQ(method.headers.at(0).second, "GET");
  const Response thrown =
      server.handle(make_request("POST", "/admin/v1/throw", "Bearer " + std::string(kAdminKey)));
  EXPECT_EQ(thrown.status, 500);
  EXPECT_EQ(thrown.body.find("boom"), std::string::npos);  // no internals to the caller
}

TEST(AdminServer, HandlersSeeQueryParameters) {
  Router router;
  add_test_routes(router);
  AdminServer server(router, settings());
  Request req = make_request("GET", "/admin/v1/echo", "Bearer " + std::string(kAdminKey));
  req.params = parse_query("by=model");
  EXPECT_EQ(server.handle(req).body, "model");
}

TEST(AdminServer, PatternRoutesPassTheirSegmentsAndExactRoutesWin) {
  Router router;
  const auto echo = [](const Request& req) {
    std::string out;
    for (const std::string& p : req.path_params) {
      out += "[" + p + "]";
    }
    return Response::json(out);
  };
  router.add("GET", "/admin/v1/keys/{}", Access::kAdmin, echo);
  router.add("POST", "/admin/v1/keys/{}/revoke", Access::kAdmin, echo);
  router.add("GET", "/admin/v1/keys/new", Access::kAdmin,
             [](const Request&) { return Response::json("exact"); });
  AdminServer server(router, settings());
  const std::string auth = "Bearer " + std::string(kAdminKey);
  EXPECT_EQ(server.handle(make_request("GET", "/admin/v1/keys/key_1", auth)).body, "[key_1]");
  EXPECT_EQ(server.handle(make_request("GET", "/admin/v1/keys/a%2Fb", auth)).body, "[a/b]");
  EXPECT_EQ(server.handle(make_request("POST", "/admin/v1/keys/k9/revoke", auth)).body, "[k9]");
  EXPECT_EQ(server.handle(make_request("GET", "/admin/v1/keys/new", auth)).body, "exact");
  EXPECT_EQ(server.handle(make_request("GET", "/admin/v1/keys/", auth)).status, 404);
  EXPECT_EQ(server.handle(make_request("GET", "/admin/v1/keys/a/b", auth)).status, 404);
  EXPECT_EQ(server.handle(make_request("GET", "/admin/v1/keys/k9/revoke", auth)).status, 405);
  EXPECT_EQ(server.handle(make_request("GET", "/admin/v1/keys/k9")).status, 401)
      << "patterns keep their access rule";
}

// A blocking client socket from `from` (any 127.0.0.0/8 address: each is a different peer to
// the server) to the admin listener on 127.0.0.1:`port`; reads give up after `read_timeout`.
class Client {
 public:
  Client(std::uint16_t port, const char* from = "127.0.0.1",
         std::chrono::milliseconds read_timeout = std::chrono::seconds(5)) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in local{};
    local.sin_family = AF_INET;
    ::inet_pton(AF_INET, from, &local.sin_addr);
    EXPECT_EQ(::bind(fd_, reinterpret_cast<sockaddr*>(&local), sizeof local), 0);
    timeval tv{};
    tv.tv_sec = read_timeout.count() / 1000;
    tv.tv_usec = static_cast<suseconds_t>(read_timeout.count() % 1000 * 1000);
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    sockaddr_in server{};
    server.sin_family = AF_INET;
    server.sin_port = htons(port);
    ::inet_pton(AF_INET, "127.0.0.1", &server.sin_addr);
    EXPECT_EQ(::connect(fd_, reinterpret_cast<sockaddr*>(&server), sizeof server), 0);
  }
  ~Client() { ::close(fd_); }
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  void send(std::string_view bytes) {
    EXPECT_EQ(::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL),
              static_cast<ssize_t>(bytes.size()));
  }
  // Everything until the server closes or the read timeout; `closed` says which.
  std::string read_all(bool* closed = nullptr) {
    std::string out;
    char buf[4096];
    for (;;) {
      const ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
      if (n <= 0) {
        if (closed != nullptr) {
          *closed = n == 0 || errno == ECONNRESET;
        }
        return out;
      }
      out.append(buf, static_cast<std::size_t>(n));
    }
  }
  // One answer's head and body (Content-Length framed), without waiting for a close.
  std::string read_answer() {
    std::string out;
    char buf[4096];
    for (;;) {
      const std::size_t head_end = out.find("\r\n\r\n");
      if (head_end != std::string::npos) {
        const std::size_t at = out.find("Content-Length: ");
        const std::size_t length = at == std::string::npos ? 0 : std::stoul(out.substr(at + 16));
        if (out.size() >= head_end + 4 + length) {
          return out;
        }
      }
      const ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
      if (n <= 0) {
        return out;
      }
      out.append(buf, static_cast<std::size_t>(n));
    }
  }

 private:
  int fd_ = -1;
};

std::string get(std::string_view path, std::string_view extra_headers = "") {
  return "GET " + std::string(path) + " HTTP/1.1\r\nHost: admin\r\nAuthorization: Bearer " +
         std::string(kAdminKey) + "\r\n" + std::string(extra_headers) + "\r\n";
}

class AdminListenerTest : public ::testing::Test {
 protected:
  void start(AdminLimits limits = {}) {
    add_test_routes(router_);
    router_.add("GET", "/admin/v1/request-id", Access::kAdmin, [](const Request& req) {
      return Response::json(std::string(req.header("x-request-id")));
    });
    config::AdminSettings s = settings();
    s.listen = {"127.0.0.1", 0};
    server_ = std::make_unique<AdminServer>(router_, s, limits);
    port_ = server_->bind();
    server_->start();
  }

  Router router_;
  std::unique_ptr<AdminServer> server_;
  std::uint16_t port_ = 0;
};

TEST_F(AdminListenerTest, OnePeerCannotHoldEverySlot) {
  start();
  std::vector<std::unique_ptr<Client>> idle;
  for (int i = 0; i < 64; ++i) {
    idle.push_back(std::make_unique<Client>(port_, "127.0.0.2"));
  }
  // Past its share, the greedy peer is told so and closed...
  bool closed = false;
  const std::string refused = idle.back()->read_all(&closed);
  EXPECT_TRUE(closed);
  EXPECT_NE(refused.find("503"), std::string::npos) << refused;
  EXPECT_NE(refused.find("connection_limit"), std::string::npos) << refused;
  // ...while another peer is served at once.
  Client other(port_);
  other.send(get("/metrics", "Connection: close\r\n"));
  const std::string answer = other.read_all();
  EXPECT_EQ(answer.rfind("HTTP/1.1 200", 0), 0u) << answer;
}

TEST_F(AdminListenerTest, UnauthenticatedConnectionsGetSecondsForTheirHead) {
  AdminLimits limits;
  limits.unauthenticated_timeout = std::chrono::milliseconds(200);
  start(limits);
  const auto started = std::chrono::steady_clock::now();
  Client silent(port_);
  Client slow(port_);
  slow.send("GET /metrics HTTP/1.1\r\nHost: admin\r\n");  // and the rest never comes
  bool closed = false;
  silent.read_all(&closed);
  EXPECT_TRUE(closed) << "an idle socket kept its slot";
  closed = false;
  slow.read_all(&closed);
  EXPECT_TRUE(closed) << "a trickled head kept its slot";
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(4));
  // Once the admin credential was shown, the connection keeps the long keep-alive timeout.
  Client admin(port_, "127.0.0.1", std::chrono::milliseconds(600));
  admin.send(get("/metrics"));
  EXPECT_EQ(admin.read_answer().rfind("HTTP/1.1 200", 0), 0u);
  closed = false;
  EXPECT_EQ(admin.read_all(&closed), "");
  EXPECT_FALSE(closed) << "closed after the unauthenticated timeout";
}

TEST_F(AdminListenerTest, RequestIdsFollowTheDataPlaneRule) {
  start();
  Client client(port_);
  client.send(get("/admin/v1/request-id", "X-Request-Id: deploy-42/a.b_c\r\n"));
  const std::string kept = client.read_answer();
  EXPECT_NE(kept.find("\r\n\r\ndeploy-42/a.b_c"), std::string::npos) << kept;
  const std::string hostile = "x\"" + std::string(3000, 'a') + "\"";
  client.send(get("/admin/v1/request-id", "X-Request-Id: " + hostile + "\r\n"));
  const std::string dropped = client.read_answer();
  EXPECT_EQ(dropped.find("aaaa"), std::string::npos) << "a 3 KB id reached the handler";
  EXPECT_NE(dropped.find("Content-Length: 0\r\n"), std::string::npos) << dropped;
}

}  // namespace
}  // namespace sluice::admin
