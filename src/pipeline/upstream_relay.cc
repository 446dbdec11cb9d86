#include "pipeline/upstream_relay.h"

#include "config/config.h"
#include "pipeline/trace_propagation.h"
#include "protocol/registry.h"

namespace sluice::pipeline {

namespace {

bool header_forwarded(std::string_view name, const providers::ProviderAdapter& adapter) {
  if (config::never_forwarded(name) || protocol::is_credential_header(name)) {
    return false;  // whatever a pattern says: credentials and framing never leave
  }
  if (is_trace_header(name)) {
    return false;  // the gateway writes its own (trace_propagation.h), never the caller's bytes
  }
  if (adapter.passes_caller_header(name)) {
    return true;
  }
  const std::vector<std::string>& patterns = adapter.config().forward_headers;
  for (const std::string& p : patterns) {
    if (!p.empty() && p.back() == '*') {
      if (providers::istarts_with(name, std::string_view(p).substr(0, p.size() - 1))) {
        return true;
      }
    } else if (providers::iequals(name, p)) {
      return true;
    }
  }
  return false;
}

}  // namespace

void add_forwarded_headers(const codec::RequestHead& head,
                           const providers::ProviderAdapter& adapter, HeaderList& out) {
  if (!adapter.forwards_caller_headers()) {
    return;
  }
  head.for_each_header([&](std::string_view name, std::string_view value) {
    if (header_forwarded(name, adapter)) {
      out.add(name, value);
    }
  });
}

void scrub_secrets(std::string& body, std::span<const std::string> secrets) {
  static constexpr std::string_view kMask = "[redacted]";
  for (const std::string& secret : secrets) {
    if (secret.size() < 8) {
      continue;  // too short to search for without mangling ordinary text
    }
    for (std::size_t at = body.find(secret); at != std::string::npos;
         at = body.find(secret, at + kMask.size())) {
      body.replace(at, secret.size(), kMask);
    }
  }
}

void relay_upstream_headers(const providers::ProviderAdapter& adapter,
                            const providers::Exchange& exchange, ResponseHead& head,
                            bool include_retry_headers) {
  exchange.for_each_header([&](std::string_view name, std::string_view value) {
    if (!adapter.relays_response_header(name)) {
      return;
    }
    if (!include_retry_headers &&
        (providers::iequals(name, "retry-after") || providers::iequals(name, "x-should-retry"))) {
      return;  // the gateway's own answer sets these
    }
    head.headers.add(name, value);
  });
}

void record_exchange(const providers::Exchange& exchange, Attempt& attempt) {
  attempt.status = exchange.status();
  attempt.acquire = exchange.timings().acquire;
  attempt.first_byte = exchange.timings().first_byte;
  attempt.reused_connection = exchange.timings().reused_connection;
}

}  // namespace sluice::pipeline
