#include "pipeline/trace_propagation.h"

#include "config/config.h"
#include "pipeline/snapshot.h"
#include "providers/adapter.h"

namespace sluice::pipeline {

void begin_trace(RequestContext& ctx, const codec::RequestHead& head) {
  const config::TraceSettings& settings = ctx.snapshot->config().traces;
  if (!head.has_header("traceparent")) {
    // Most requests: no caller context, and no walk over the fields for one.
    if (settings.enabled) {
      ctx.trace = observability::begin_trace(0, {}, {}, true, settings.sample_ratio);
    }
    return;
  }
  std::size_t traceparents = 0;
  std::string_view traceparent;
  std::string_view tracestate;
  std::string joined_state;  // only when the caller split tracestate over several fields
  head.for_each_header([&](std::string_view name, std::string_view value) {
    if (providers::iequals(name, "traceparent")) {
      if (++traceparents == 1) {
        traceparent = value;
      }
    } else if (providers::iequals(name, "tracestate")) {
      // RFC 9110 section 5.3: repeated fields are one comma-separated list.
      if (tracestate.empty() && joined_state.empty()) {
        tracestate = value;
      } else {
        if (joined_state.empty()) {
          joined_state = tracestate;
        }
        joined_state.append(",").append(value);
      }
    }
  });
  if (!joined_state.empty()) {
    tracestate = joined_state;
  }
  ctx.trace = observability::begin_trace(traceparents, traceparent, tracestate, settings.enabled,
                                         settings.sample_ratio);
}

bool is_trace_header(std::string_view name) {
  return providers::iequals(name, "traceparent") || providers::iequals(name, "tracestate");
}

observability::SpanId UpstreamTrace::add(const RequestContext& ctx, HeaderList& out) {
  const observability::TraceContext& trace = ctx.trace;
  if (!trace.active()) {
    return 0;
  }
  const observability::SpanId span = trace.span != 0 ? observability::new_span_id() : trace.parent;
  observability::format_traceparent(trace.trace, span, trace.sampled, traceparent_);
  out.add("traceparent", std::string_view(traceparent_.data(), traceparent_.size()));
  if (!trace.tracestate.empty()) {
    out.add("tracestate", trace.tracestate);
  }
  return span;
}

}  // namespace sluice::pipeline
