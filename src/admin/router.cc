#include "admin/router.h"

#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

#include "codec/percent.h"

namespace sluice::admin {

std::vector<QueryParam> parse_query(std::string_view query) {
  std::vector<QueryParam> params;
  while (!query.empty()) {
    const std::size_t amp = query.find('&');
    const std::string_view pair = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
    if (pair.empty()) {
      continue;
    }
    const std::size_t eq = pair.find('=');
    params.push_back({codec::percent_decode(pair.substr(0, eq), true),
                      eq == std::string_view::npos
                          ? std::string()
                          : codec::percent_decode(pair.substr(eq + 1), true)});
  }
  return params;
}

std::optional<std::string_view> Request::param(std::string_view name) const {
  for (const QueryParam& p : params) {
    if (p.name == name) {
      return std::string_view(p.value);
    }
  }
  return std::nullopt;
}

Response Response::error(int status, std::string_view code, std::string_view message) {
  boost::json::object inner{{"code", code}, {"message", message}};
  return json(boost::json::serialize(boost::json::object{{"error", std::move(inner)}}), status);
}

Response Response::json(std::string body, int status) {
  Response r;
  r.status = status;
  r.body = std::move(body);
  return r;
}

void Router::add(std::string method, std::string path, Access access, Handler handler) {
  std::lock_guard lock(mu_);
  for (Route& r : routes_) {
    if (r.method == method && r.path == path) {
      r.match = Match{std::move(handler), access, {}};
      return;
    }
  }
  routes_.push_back(
      Route{std::move(method), std::move(path), Match{std::move(handler), access, {}}});
}

namespace {

// Whether `path` matches `pattern` segment by segment, "{}" standing for any one non-empty
// segment; the matched segments are appended to `captured`.
bool matches(std::string_view pattern, std::string_view path, std::vector<std::string>* captured) {
  if (pattern.find("{}") == std::string_view::npos) {
    return pattern == path;
  }
  while (!pattern.empty() || !path.empty()) {
    const std::size_t p_end = pattern.find('/', 1);
    const std::size_t s_end = path.find('/', 1);
    const std::string_view p_seg = pattern.substr(0, p_end);
    const std::string_view s_seg = path.substr(0, s_end);
    if (p_seg == "/{}") {
      if (s_seg.size() < 2) {
        return false;
      }
      captured->push_back(codec::percent_decode(s_seg.substr(1), false));
    } else if (p_seg != s_seg) {
      return false;
    }
    pattern = p_end == std::string_view::npos ? std::string_view() : pattern.substr(p_end);
    path = s_end == std::string_view::npos ? std::string_view() : path.substr(s_end);
  }
  return true;
}

}  // namespace

std::optional<Router::Match> Router::find(std::string_view method, std::string_view path,
                                          std::string* allowed) const {
  std::lock_guard lock(mu_);
  // Exact routes first, then patterns: "/admin/v1/keys/new" may be its own route beside
  // "/admin/v1/keys/{}".
  for (const bool exact : {true, false}) {
    std::optional<Match> found = find_one(method, path, exact, allowed);
    if (found) {
      return found;
    }
  }
  return std::nullopt;
}

std::optional<Router::Match> Router::find_one(std::string_view method, std::string_view path,
                                              bool exact, std::string* allowed) const {
  for (const Route& r : routes_) {
    if ((r.path.find("{}") == std::string::npos) != exact) {
      continue;
    }
    std::vector<std::string> captured;
    if (!matches(r.path, path, &captured)) {
      continue;
    }
    if (r.method == method) {
      Match m = r.match;
      m.path_params = std::move(captured);
      return m;
    }
    if (allowed != nullptr) {
      if (!allowed->empty()) {
        *allowed += ", ";
      }
      *allowed += r.method;
    }
  }
  return std::nullopt;
}

}  // namespace sluice::admin
