#pragma once

#include <span>
#include <string>
#include <string_view>

#include "codec/request_head.h"
#include "pipeline/downstream.h"
#include "pipeline/request_context.h"
#include "providers/adapter.h"
#include "providers/exchange.h"

// What every call that talks to an upstream shares (model calls, stored-object GETs): which
// caller headers go up, which upstream headers come back, and keeping provider secrets out of
// what a caller reads.
namespace sluice::pipeline {

// The caller headers `adapter` may receive: its provider's forward_headers patterns and the
// headers its protocol defines for callers (passes_caller_header); never framing
// (config::never_forwarded) nor a header any caller protocol reads a gateway key from
// (protocol::is_credential_header). Added to `out` (views into `head`).
void add_forwarded_headers(const codec::RequestHead& head,
                           const providers::ProviderAdapter& adapter, HeaderList& out);

// Masks the provider's secrets in an upstream body a caller will see: some servers echo the
// credential they refused.
void scrub_secrets(std::string& body, std::span<const std::string> secrets);

// Copies the upstream headers the adapter relays (rate-limit state) into `head`; Retry-After
// and x-should-retry only when `include_retry_headers` (the gateway's own error answers set
// them).
void relay_upstream_headers(const providers::ProviderAdapter& adapter,
                            const providers::Exchange& exchange, ResponseHead& head,
                            bool include_retry_headers);

// The upstream's status and connection timings, into the attempt that opened `exchange`.
void record_exchange(const providers::Exchange& exchange, Attempt& attempt);

}  // namespace sluice::pipeline
