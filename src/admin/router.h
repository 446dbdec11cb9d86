#pragma once

#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sluice::admin {

// One query-string parameter, percent-decoded ('+' is a space, as HTML forms send it).
struct QueryParam {
  std::string name;
  std::string value;
};

// Splits `query` (the part after '?', without it) into parameters, in order. Malformed
// percent escapes are kept literally; never fails.
std::vector<QueryParam> parse_query(std::string_view query);

// A request to the admin listener, as a handler sees it. Views into the connection's buffers:
// valid only during the handler call.
struct Request {
  std::string_view method;
  std::string_view path;   // without the query
  std::string_view query;  // raw, without '?'
  std::string_view body;
  std::vector<QueryParam> params;        // parse_query(query)
  std::vector<std::string> path_params;  // the segments a route's "{}" matched, in order
  // Case-insensitive; "" if absent. An X-Request-Id that fails codec::acceptable_request_id
  // reads as absent (the handler makes its own id).
  std::function<std::string_view(std::string_view)> header;

  // The first value of query parameter `name`, if present.
  std::optional<std::string_view> param(std::string_view name) const;
};

struct Response {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  // Extra header fields (e.g. WWW-Authenticate, Allow).
  std::vector<std::pair<std::string, std::string>> headers;

  // {"error":{"code":...,"message":...}} with `status`.
  static Response error(int status, std::string_view code, std::string_view message);
  static Response json(std::string body, int status = 200);
};

// Who may call a route.
enum class Access : std::uint8_t {
  kAdmin,    // the admin credential (Authorization: Bearer <admin key>)
  kPublic,   // anyone who can reach the admin address (health checks)
  kMetrics,  // public when admin.metrics_public, else the admin credential
};

using Handler = std::function<Response(const Request&)>;

// Method + path -> handler. A path is exact, or has "{}" segments that each match one
// non-empty segment ("/admin/v1/keys/{}/revoke"), percent-decoded into Request::path_params;
// an exact route wins over a pattern. Routes may be added from any thread at any time (start-up
// wiring, other subsystems as they come up); dispatch runs on the admin thread. Handlers run on
// the admin listener's own thread, never a data-plane worker: they may block briefly (a store
// query) but hold up other admin requests meanwhile. A handler that throws answers 500.
class Router {
 public:
  struct Match {
    Handler handler;
    Access access = Access::kAdmin;
    std::vector<std::string> path_params;
  };

  // Replaces an existing route for the same method and path.
  void add(std::string method, std::string path, Access access, Handler handler);
  // The route for `method` and `path`; on a miss, `allowed` lists the methods the path has
  // (empty: unknown path, 404; else 405).
  std::optional<Match> find(std::string_view method, std::string_view path,
                            std::string* allowed) const;

 private:
  struct Route {
    std::string method;
    std::string path;
    Match match;
  };
  std::optional<Match> find_one(std::string_view method, std::string_view path, bool exact,
                                std::string* allowed) const;

  mutable std::mutex mu_;
  std::vector<Route> routes_;
};

}  // namespace sluice::admin
