#pragma once

#include <chrono>
#include <string>

#include "core/result.h"

namespace sluice::http {

// POSTs `body` as application/json to `url` (http:// or https://; the certificate is verified
// against the system store) on a fresh connection, and returns the answer's HTTP status. The
// whole exchange (resolve, connect, TLS, write, read of at most 64 KiB) is bounded by `timeout`.
// Blocking, with its own io_context: for background threads (budget webhooks), never a worker.
// Transport failures and timeouts are an Error (kUpstreamUnreachable / kUpstreamTimeout).
Result<int> post_json(const std::string& url, const std::string& body,
                      std::chrono::milliseconds timeout);

}  // namespace sluice::http
