#pragma once

#include <functional>
#include <memory>

#include "admin/router.h"
#include "core/result.h"
#include "store/store.h"

namespace sluice::admin {

// The usage endpoints of the admin listener, answering what `sluice usage` answers, byte for
// byte (store/usage_report.h):
//   GET /admin/v1/usage?by=key,model&since=7d&key=...&format=json|csv|table
//   GET /admin/v1/usage/record?request_id=ID[&format=table]   one request's record (JSON)
// JSON unless `format` says otherwise. Errors are {"error":{...}}: 400 for a bad parameter,
// 404 for an unknown request id, 503 while the store cannot be reached.
//
// The routes own one Store connection of their own (a Store is used by one thread at a time;
// the usage sink has its own), opened by `open` on first use, on the admin thread.
class UsageRoutes {
 public:
  using OpenStore = std::function<Result<std::unique_ptr<store::Store>>()>;
  // `now_ms` is the wall clock in unix milliseconds (relative times like since=7d).
  UsageRoutes(OpenStore open, std::function<std::int64_t()> now_ms);
  ~UsageRoutes();

  // Adds both routes to `router`; this object must outlive the router's use of them.
  void add_to(Router& router);

  Response report(const Request& request);
  Response record(const Request& request);

 private:
  store::Store* store(Response& unavailable);

  OpenStore open_;
  std::function<std::int64_t()> now_ms_;
  std::unique_ptr<store::Store> store_;  // admin thread only
};

}  // namespace sluice::admin
