#pragma once

#include <optional>

#include <boost/asio/awaitable.hpp>

#include "core/error.h"
#include "pipeline/downstream.h"
#include "pipeline/request_context.h"
#include "protocol/ingress.h"

namespace sluice::pipeline {

// The admission stage: concurrency caps, RPM/TPM buckets and budget checks decide here whether
// a decoded request may go on (the admission issue implements it). Runs after decode and route
// resolution, before any upstream work. An error answers the caller (429 + Retry-After, in the
// caller's protocol). The default admits everything.
class Admission {
 public:
  virtual ~Admission() = default;
  virtual boost::asio::awaitable<std::optional<Error>> admit(
      RequestContext& ctx, const protocol::IngressRequest& request) = 0;
};

// The cache stage: an answer for an identical earlier request (the caching issue implements
// it). Runs after admission. Nothing is cached yet; the default always misses.
class ResponseCache {
 public:
  virtual ~ResponseCache() = default;
  // A hit is written to `downstream` by the cache, which then returns true.
  virtual boost::asio::awaitable<bool> serve_hit(RequestContext& ctx,
                                                 const protocol::IngressRequest& request,
                                                 Downstream& downstream) = 0;
};

}  // namespace sluice::pipeline
