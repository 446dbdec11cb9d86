#pragma once

#include <functional>
#include <memory>
#include <string_view>

#include <boost/json/value.hpp>

#include "admin/router.h"
#include "admin/tenancy_changes.h"
#include "core/function_ref.h"
#include "core/result.h"
#include "store/store.h"

namespace sluice::admin {

// Key groups, API keys and their audit log on the admin listener (docs/tenancy.md, "Admin
// API"):
//   GET  POST          /admin/v1/groups
//   GET  PATCH DELETE  /admin/v1/groups/{name}
//   GET  POST          /admin/v1/keys            (GET ?group=NAME)
//   GET  PATCH         /admin/v1/keys/{id}
//   POST               /admin/v1/keys/{id}/revoke
//   POST               /admin/v1/keys/{id}/rotate    (a new secret, shown once)
//   GET                /admin/v1/audit?object_type=&object_id=&since=&until=&limit=
// JSON in and out; errors {"error":{"code","message"}} with 400/404/409/422/500/503. Each
// route reads its request (admin/tenancy_requests.h), runs the rule (tenancy/rules.h) through
// TenancyChanges and renders the answer (admin/tenancy_answers.h). A POST, PATCH or DELETE with
// an Idempotency-Key header (1 to 255 printable bytes) is done once: a retry with the same key
// and the same method, path and body gets the stored answer (every new secret in it withheld),
// the same key with another request 422.
//
// Owns one Store connection, opened by `open` on first use on the admin thread (like
// UsageRoutes).
class TenancyRoutes {
 public:
  using OpenStore = std::function<Result<std::unique_ptr<store::Store>>()>;
  using Options = TenancyChanges::Options;
  TenancyRoutes(OpenStore open, Options options);
  ~TenancyRoutes();

  // Adds every route to `router`; this object must outlive the router's use of them.
  void add_to(Router& router);

 private:
  using Read = FunctionRef<Result<boost::json::value>(const store::TenancyState&)>;
  // A GET over the stored state.
  Response read(const Request& request, Read read);
  // A change: `rule` through TenancyChanges, answered with `render` and `status`.
  Response change(const Request& request, int status, TenancyChanges::Rule rule,
                  TenancyChanges::Render render);
  Response audit(const Request& request);
  // The routes' answer to a request (with its X-Request-Id), or the store's unavailability.
  Response answer(const TenancyCaller& caller, const Result<TenancyAnswer>& answer);
  TenancyChanges* changes(Response& unavailable);

  OpenStore open_;
  Options options_;
  std::unique_ptr<store::Store> store_;      // admin thread only
  std::unique_ptr<TenancyChanges> changes_;  // over store_
};

}  // namespace sluice::admin
