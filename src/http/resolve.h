#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <utility>

#include "http/net.h"

namespace sluice::http {

// Resolves `host`:`port` on `executor`, giving up at `deadline`: name resolution has no deadline
// of its own, so a timer cancels it (the error is then operation_aborted). Used by every client
// that opens connections: the upstream pool, the OTLP exporter, webhook posts.
Awaitable<std::pair<boost::system::error_code, tcp::resolver::results_type>> resolve_with_deadline(
    const net::any_io_executor& executor, const std::string& host, std::uint16_t port,
    std::chrono::steady_clock::time_point deadline);

}  // namespace sluice::http
