#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "observability/span_buffer.h"
#include "pipeline/observer.h"

namespace sluice::pipeline {

// The spans of one finished request, each an OTLP/JSON Span object (observability/otlp_json.h),
// appended to `out`: one SERVER span for the request (its parent the caller's span, when it
// sent a traceparent) and one CLIENT span per upstream attempt, child of the server span, with
// the span id the attempt sent upstream. Named and attributed after the OpenTelemetry GenAI
// semantic conventions ("chat gpt-4o"; gen_ai.*, http.*, server.*, error.type) plus sluice.*
// (alias, key name, attempt path, breaker, backoff, retry stop, outcome, cost). Never a
// prompt, a response or a credential. Times are ctx.wall_started plus the steady-clock offsets.
// Nothing is appended unless ctx.trace.recording; health and readiness probes are left out.
void encode_request_spans(const RequestContext& ctx, std::vector<std::string>& out);

// Queues the spans of every recorded request (encode_request_spans) on the trace exporter's
// buffer when the request ends. One per worker: `worker` picks the buffer's per-worker queue.
// Encoding happens on the worker (a few microseconds, sampled requests only); the export runs on
// the exporter's thread (http/otlp_exporter.h).
class TraceObserver final : public RequestObserver {
 public:
  TraceObserver(observability::SpanBuffer& buffer, std::size_t worker)
      : buffer_(buffer), worker_(worker) {}

  void on_finish(const RequestContext& ctx) override;

 private:
  observability::SpanBuffer& buffer_;
  std::size_t worker_;
  std::vector<std::string> spans_;  // reused between requests
};

}  // namespace sluice::pipeline
