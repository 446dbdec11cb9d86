#pragma once

#include <array>
#include <string_view>

#include "codec/request_head.h"
#include "observability/trace_context.h"
#include "pipeline/downstream.h"
#include "pipeline/request_context.h"

// W3C Trace Context in and out of the gateway: the caller's `traceparent` / `tracestate` are
// read once per request (Pipeline::on_head), and every upstream attempt carries the gateway's
// own, re-written from the parsed context: the caller's header bytes never pass through
// (forwarding patterns cannot match them: upstream_relay.cc), so a malformed or duplicated
// value never reaches an upstream.
namespace sluice::pipeline {

// Sets ctx.trace from the caller's headers and the pinned snapshot's `traces:` settings
// (observability::begin_trace: a valid caller context is continued with its sampled flag; a
// new trace is started, sampled at traces.sample_ratio, only when tracing is configured).
void begin_trace(RequestContext& ctx, const codec::RequestHead& head);

// Whether `name` is a trace-context header the gateway writes itself (case-insensitive).
bool is_trace_header(std::string_view name);

// The trace headers of one upstream attempt. Holds the formatted traceparent, so it must
// outlive the HeaderList it was added to (until the request head is written).
class UpstreamTrace {
 public:
  // Picks the attempt's span (the parent-id its upstream sees): a new span id when the
  // gateway traces this request, the caller's own span when it only carries the caller's
  // context on (tracing off: no gateway span exists to point at); 0 when ctx.trace is
  // inactive. Adds traceparent (and tracestate when there is one) to `out`.
  observability::SpanId add(const RequestContext& ctx, HeaderList& out);

 private:
  std::array<char, observability::kTraceparentSize> traceparent_{};
};

}  // namespace sluice::pipeline
