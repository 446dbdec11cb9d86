#include "admin/admin_server.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace sluice::admin
