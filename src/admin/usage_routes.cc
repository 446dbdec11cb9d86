#include "admin/usage_routes.h"

#include <string>
#include <utility>
#include <vector>

#include "store/usage_report.h"

namespace sluice::admin {

namespace {

Response rendered(std::string body, store::ReportFormat format) {
  Response r;
  r.body = std::move(body);
  switch (format) {
    case store::ReportFormat::kJson:
      r.content_type = "application/json";
      break;
    case store::ReportFormat::kCsv:
      r.content_type = "text/csv; charset=utf-8";
      break;
    case store::ReportFormat::kTable:
      r.content_type = "text/plain; charset=utf-8";
      break;
  }
  return r;
}

Response store_error(const Error& e) {
  if (e.kind() == ErrorKind::kUnavailable) {
    return Response::error(503, "store_unavailable", e.message());
  }
  return Response::error(500, "store_error", e.message());
}

}  // namespace

UsageRoutes::UsageRoutes(OpenStore open, std::function<std::int64_t()> now_ms)
    : open_(std::move(open)), now_ms_(std::move(now_ms)) {}

UsageRoutes::~UsageRoutes() = default;

void UsageRoutes::add_to(Router& router) {
  router.add("GET", "/admin/v1/usage", Access::kAdmin,
             [this](const Request& request) { return report(request); });
  router.add("GET", "/admin/v1/usage/record", Access::kAdmin,
             [this](const Request& request) { return record(request); });
}

store::Store* UsageRoutes::store(Response& unavailable) {
  if (!store_) {
    auto opened = open_();
    if (!opened) {
      unavailable = store_error(opened.error());
      return nullptr;
    }
    if (!*opened) {
      unavailable = Response::error(404, "no_store",
                                    "no store is configured (store: none): usage is not kept");
      return nullptr;
    }
    store_ = std::move(*opened);
  }
  return store_.get();
}

Response UsageRoutes::report(const Request& request) {
  std::vector<std::pair<std::string, std::string>> params;
  bool format_given = false;
  for (const QueryParam& p : request.params) {
    format_given = format_given || p.name == "format";
    params.emplace_back(p.name, p.value);
  }
  if (!format_given) {
    params.emplace_back("format", "json");  // the CLI defaults to a table, HTTP to JSON
  }
  auto parsed = store::parse_usage_report(params, now_ms_());
  if (!parsed) {
    return Response::error(400, "invalid_parameter", parsed.error().message());
  }
  Response failure;
  store::Store* s = store(failure);
  if (s == nullptr) {
    return failure;
  }
  auto rows = s->query_usage(parsed->query);
  if (!rows) {
    return store_error(rows.error());
  }
  return rendered(store::render_usage(parsed->query, *rows, parsed->format), parsed->format);
}

Response UsageRoutes::record(const Request& request) {
  const std::optional<std::string_view> id = request.param("request_id");
  if (!id || id->empty()) {
    return Response::error(400, "invalid_parameter", "request_id is required");
  }
  store::ReportFormat format = store::ReportFormat::kJson;
  if (const auto f = request.param("format")) {
    if (*f == "table") {
      format = store::ReportFormat::kTable;
    } else if (*f != "json") {
      return Response::error(400, "invalid_parameter", "format: expected json or table");
    }
  }
  Response failure;
  store::Store* s = store(failure);
  if (s == nullptr) {
    return failure;
  }
  auto found = s->find_usage(*id);
  if (!found) {
    return store_error(found.error());
  }
  if (!*found) {
    return Response::error(404, "not_found", "no usage record for request id " + std::string(*id));
  }
  return rendered(store::render_usage_record(**found, format), format);
}

}  // namespace sluice::admin
