#include "admin/tenancy_routes.h"

#include <atomic>
#include <charconv>
#include <string>
#include <utility>

#include <boost/json.hpp>
#include <fmt/format.h>

#include "config/scalars.h"
#include "store/usage_report.h"

namespace sluice::admin {

namespace {

namespace json = boost::json;

constexpr std::size_t kMaxIdempotencyKey = 255;

Response from_error(const Error& e) {
  const std::string code = e.code().empty() ? "error" : e.code();
  return Response::error(e.http_status(), code, e.message());
}

Response from_reply(const Result<tenancy::AdminReply>& reply) {
  if (!reply) {
    return from_error(reply.error());
  }
  return Response::json(json::serialize(reply->body), reply->status);
}

bool printable(std::string_view text) {
  for (const char c : text) {
    if (c < 0x21 || c > 0x7e) {
      return false;
    }
  }
  return true;
}

}  // namespace

TenancyRoutes::TenancyRoutes(OpenStore open, tenancy::AdminService::Options options)
    : open_(std::move(open)), options_(std::move(options)) {}

TenancyRoutes::~TenancyRoutes() = default;

void TenancyRoutes::add_to(Router& router) {
  using tenancy::AdminCaller;
  using tenancy::AdminService;
  router.add("GET", "/admin/v1/groups", Access::kAdmin, [this](const Request& r) {
    return serve(r, [](AdminService& s, const AdminCaller&) { return s.list_groups(); });
  });
  router.add("POST", "/admin/v1/groups", Access::kAdmin, [this](const Request& r) {
    return with_body(r, [](AdminService& s, const json::value& body, const AdminCaller& c) {
      return s.create_group(body, c);
    });
  });
  router.add("GET", "/admin/v1/groups/{}", Access::kAdmin, [this](const Request& r) {
    return serve(
        r, [&](AdminService& s, const AdminCaller&) { return s.get_group(r.path_params[0]); });
  });
  router.add("PATCH", "/admin/v1/groups/{}", Access::kAdmin, [this](const Request& r) {
    return with_body(r, [&](AdminService& s, const json::value& body, const AdminCaller& c) {
      return s.update_group(r.path_params[0], body, c);
    });
  });
  router.add("DELETE", "/admin/v1/groups/{}", Access::kAdmin, [this](const Request& r) {
    return serve(r, [&](AdminService& s, const AdminCaller& c) {
      return s.delete_group(r.path_params[0], c);
    });
  });
  router.add("GET", "/admin/v1/keys", Access::kAdmin, [this](const Request& r) {
    return serve(
        r, [&](AdminService& s, const AdminCaller&) { return s.list_keys(r.param("group")); });
  });
  router.add("POST", "/admin/v1/keys", Access::kAdmin, [this](const Request& r) {
    return with_body(r, [](AdminService& s, const json::value& body, const AdminCaller& c) {
      return s.create_key(body, c);
    });
  });
  router.add("GET", "/admin/v1/keys/{}", Access::kAdmin, [this](const Request& r) {
    return serve(r,
                 [&](AdminService& s, const AdminCaller&) { return s.get_key(r.path_params[0]); });
  });
  router.add("PATCH", "/admin/v1/keys/{}", Access::kAdmin, [this](const Request& r) {
    return with_body(r, [&](AdminService& s, const json::value& body, const AdminCaller& c) {
      return s.update_key(r.path_params[0], body, c);
    });
  });
  router.add("POST", "/admin/v1/keys/{}/revoke", Access::kAdmin, [this](const Request& r) {
    return serve(r, [&](AdminService& s, const AdminCaller& c) {
      return s.revoke_key(r.path_params[0], c);
    });
  });
  router.add("POST", "/admin/v1/keys/{}/rotate", Access::kAdmin, [this](const Request& r) {
    return serve(r, [&](AdminService& s, const AdminCaller& c) {
      return s.rotate_key(r.path_params[0], c);
    });
  });
  router.add("GET", "/admin/v1/audit", Access::kAdmin,
             [this](const Request& r) { return audit(r); });
}

tenancy::AdminService* TenancyRoutes::service(Response& unavailable) {
  if (!service_) {
    auto opened = open_();
    if (!opened) {
      unavailable = Response::error(503, "store_unavailable", opened.error().message());
      return nullptr;
    }
    if (!*opened) {
      unavailable = Response::error(404, "no_store",
                                    "no store is configured (store: none): keys are not kept");
      return nullptr;
    }
    // The usage sink migrates at start too, on its own thread: whichever comes first applies
    // the migrations, the other finds them applied.
    if (auto migrated = (*opened)->migrate(); !migrated) {
      unavailable = Response::error(503, "store_unavailable", migrated.error().message());
      return nullptr;
    }
    store_ = std::move(*opened);
    service_ = std::make_unique<tenancy::AdminService>(*store_, options_);
  }
  return service_.get();
}

Response TenancyRoutes::serve(const Request& request, const Call& call) {
  static std::atomic<std::uint64_t> counter{0};
  tenancy::AdminCaller caller;
  caller.request_id = std::string(request.header("x-request-id"));
  if (caller.request_id.empty()) {
    caller.request_id = fmt::format("admin-{}-{}", options_.now_ms(), ++counter);
  }
  if (request.method != "GET") {
    caller.idempotency_key = std::string(request.header("idempotency-key"));
    if (!caller.idempotency_key.empty()) {
      if (caller.idempotency_key.size() > kMaxIdempotencyKey ||
          !printable(caller.idempotency_key)) {
        return Response::error(400, "invalid_request",
                               "Idempotency-Key: 1 to 255 printable ASCII characters");
      }
      caller.request_sha256 =
          config::sha256_hex(fmt::format("{}\n{}\n{}", request.method, request.path, request.body));
    }
  }
  Response failure;
  tenancy::AdminService* s = service(failure);
  if (s == nullptr) {
    return failure;
  }
  Response r = from_reply(call(*s, caller));
  r.headers.emplace_back("X-Request-Id", caller.request_id);
  return r;
}

Response TenancyRoutes::with_body(
    const Request& request,
    const std::function<Result<tenancy::AdminReply>(tenancy::AdminService&, const json::value&,
                                                    const tenancy::AdminCaller&)>& call) {
  boost::system::error_code ec;
  const json::value body = json::parse(request.body, ec);
  if (ec) {
    return Response::error(400, "invalid_json", "the body is not JSON: " + ec.message());
  }
  return serve(request, [&](tenancy::AdminService& s, const tenancy::AdminCaller& c) {
    return call(s, body, c);
  });
}

Response TenancyRoutes::audit(const Request& request) {
  store::AuditQuery q;
  for (const QueryParam& p : request.params) {
    if (p.name == "object_type") {
      q.object_type = p.value;
    } else if (p.name == "object_id") {
      q.object_id = p.value;
    } else if (p.name == "since" || p.name == "until") {
      const auto ms = store::parse_report_time(p.value, options_.now_ms());
      if (!ms) {
        return Response::error(400, "invalid_parameter",
                               p.name + ": expected 7d, 24h, 90m, a date or an RFC 3339 time");
      }
      (p.name == "since" ? q.from_ms : q.to_ms) = *ms;
    } else if (p.name == "limit") {
      unsigned limit = 0;
      const auto [end, ec] =
          std::from_chars(p.value.data(), p.value.data() + p.value.size(), limit);
      if (ec != std::errc() || end != p.value.data() + p.value.size() || limit < 1 ||
          limit > 10000) {
        return Response::error(400, "invalid_parameter", "limit: expected 1 to 10000");
      }
      q.limit = limit;
    } else {
      return Response::error(400, "invalid_parameter", "unknown parameter " + p.name);
    }
  }
  return serve(request, [&](tenancy::AdminService& s, const tenancy::AdminCaller&) {
    return s.list_audit(q);
  });
}

}  // namespace sluice::admin
