#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "observability/trace_context.h"

// OTLP/HTTP JSON encoding of spans (opentelemetry-proto docs/specification.md, "JSON Protobuf
// Encoding"): field names in lowerCamelCase, trace and span ids as hex strings (not base64),
// enums as integers, 64-bit integers (times, int attributes) as decimal strings. Pure
// functions over strings: no I/O, any thread.
namespace sluice::observability {

// opentelemetry.proto.trace.v1.Span.SpanKind
enum class SpanKind : int { kInternal = 1, kServer = 2, kClient = 3 };
// opentelemetry.proto.trace.v1.Status.StatusCode
enum class SpanStatus : int { kUnset = 0, kOk = 1, kError = 2 };

// Appends one Span object to `out`. Attributes are written in call order; finish() writes the
// status and closes the object (a writer that is not finished leaves `out` incomplete).
// Attribute keys must be literals that need no JSON escaping; values are escaped.
class SpanWriter {
 public:
  struct Times {
    std::int64_t start_unix_ns = 0;
    std::int64_t end_unix_ns = 0;
  };

  // `parent` 0 = a root span (no parentSpanId).
  SpanWriter(std::string& out, const TraceId& trace, SpanId span, SpanId parent,
             std::string_view name, SpanKind kind, Times times);

  SpanWriter& str(std::string_view key, std::string_view value);
  SpanWriter& integer(std::string_view key, std::int64_t value);
  SpanWriter& boolean(std::string_view key, bool value);
  SpanWriter& real(std::string_view key, double value);
  SpanWriter& strings(std::string_view key, std::span<const std::string_view> values);

  // kError carries `message` (left out when empty); other codes have none.
  void finish(SpanStatus status, std::string_view message = {});

 private:
  void key(std::string_view key);
  std::string& out_;
  bool first_ = true;
};

// The resource every exported span shares.
struct ResourceInfo {
  std::string_view service_name;
  std::string_view service_version;
  std::string_view instance_id;  // service.instance.id; left out when empty
};

// An ExportTraceServiceRequest body holding `spans` (each a complete Span object from
// SpanWriter) under one resource and the instrumentation scope "sluice".
std::string export_request(const ResourceInfo& resource, std::span<const std::string> spans);

}  // namespace sluice::observability
