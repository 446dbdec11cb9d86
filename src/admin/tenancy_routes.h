#pragma once

#include <functional>
#include <memory>
#include <string_view>

#include "admin/router.h"
#include "core/result.h"
#include "store/store.h"
#include "tenancy/admin_service.h"

namespace sluice::admin {

// Key groups, API keys and their audit log on the admin listener (docs/tenancy.md, "Admin
// API"); the rules are tenancy::AdminService's, this is HTTP around them:
//   GET  POST          /admin/v1/groups
//   GET  PATCH DELETE  /admin/v1/groups/{name}
//   GET  POST          /admin/v1/keys            (GET ?group=NAME)
//   GET  PATCH         /admin/v1/keys/{id}
//   POST               /admin/v1/keys/{id}/revoke
//   POST               /admin/v1/keys/{id}/rotate    (a new secret, shown once)
//   GET                /admin/v1/audit?object_type=&object_id=&since=&until=&limit=
// JSON in and out; errors {"error":{"code","message"}} with 400/404/409/422/503. A POST, PATCH
// or DELETE with an Idempotency-Key header (1 to 255 printable bytes) is done once: a retry
// with the same key and the same method, path and body gets the stored answer (a new key's
// secret replaced by null), the same key with another request 422.
//
// Owns one Store connection, opened by `open` on first use on the admin thread (like
// UsageRoutes).
class TenancyRoutes {
 public:
  using OpenStore = std::function<Result<std::unique_ptr<store::Store>>()>;
  TenancyRoutes(OpenStore open, tenancy::AdminService::Options options);
  ~TenancyRoutes();

  // Adds every route to `router`; this object must outlive the router's use of them.
  void add_to(Router& router);

 private:
  using Call = std::function<Result<tenancy::AdminReply>(tenancy::AdminService&,
                                                         const tenancy::AdminCaller&)>;
  // Parses nothing itself: runs `call` with the caller (request id, Idempotency-Key) and
  // renders its reply or error.
  Response serve(const Request& request, const Call& call);
  Response with_body(
      const Request& request,
      const std::function<Result<tenancy::AdminReply>(
          tenancy::AdminService&, const boost::json::value&, const tenancy::AdminCaller&)>& call);
  Response audit(const Request& request);
  tenancy::AdminService* service(Response& unavailable);

  OpenStore open_;
  tenancy::AdminService::Options options_;
  std::unique_ptr<store::Store> store_;             // admin thread only
  std::unique_ptr<tenancy::AdminService> service_;  // over store_
};

}  // namespace sluice::admin
