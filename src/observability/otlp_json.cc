#include "observability/otlp_json.h"

#include "codec/json_writer.h"

namespace sluice::observability {

namespace {

void quoted_decimal(std::string& out, std::int64_t v) {
  out.push_back('"');
  out.append(std::to_string(v));
  out.push_back('"');
}

void string_attribute(codec::JsonWriter& w, std::string_view key, std::string_view value,
                      bool first) {
  w.raw(first ? R"({"key":")" : R"(,{"key":")").raw(key).raw(R"(","value":{"stringValue":)");
  w.string(value).raw("}}");
}

}  // namespace

SpanWriter::SpanWriter(std::string& out, const TraceId& trace, SpanId span, SpanId parent,
                       std::string_view name, SpanKind kind, Times times)
    : out_(out) {
  std::array<char, kTraceIdHex> trace_hex;
  std::array<char, kSpanIdHex> span_hex;
  format_hex(trace, trace_hex);
  format_hex(span, span_hex);
  codec::JsonWriter w(out_);
  w.raw(R"({"traceId":")").raw({trace_hex.data(), trace_hex.size()});
  w.raw(R"(","spanId":")").raw({span_hex.data(), span_hex.size()}).ch('"');
  if (parent != 0) {
    format_hex(parent, span_hex);
    w.raw(R"(,"parentSpanId":")").raw({span_hex.data(), span_hex.size()}).ch('"');
  }
  w.raw(R"(,"name":)").string(name);
  w.raw(R"(,"kind":)").number(static_cast<std::int64_t>(kind));
  w.raw(R"(,"startTimeUnixNano":)");
  quoted_decimal(out_, times.start_unix_ns);
  w.raw(R"(,"endTimeUnixNano":)");
  quoted_decimal(out_, times.end_unix_ns);
  w.raw(R"(,"attributes":[)");
}

void SpanWriter::key(std::string_view key) {
  out_.append(first_ ? R"({"key":")" : R"(,{"key":")").append(key).append(R"(","value":)");
  first_ = false;
}

SpanWriter& SpanWriter::str(std::string_view key, std::string_view value) {
  this->key(key);
  codec::JsonWriter(out_).raw(R"({"stringValue":)").string(value).raw("}}");
  return *this;
}

SpanWriter& SpanWriter::integer(std::string_view key, std::int64_t value) {
  this->key(key);
  out_.append(R"({"intValue":)");
  quoted_decimal(out_, value);
  out_.append("}}");
  return *this;
}

SpanWriter& SpanWriter::boolean(std::string_view key, bool value) {
  this->key(key);
  out_.append(value ? R"({"boolValue":true}})" : R"({"boolValue":false}})");
  return *this;
}

SpanWriter& SpanWriter::real(std::string_view key, double value) {
  this->key(key);
  codec::JsonWriter(out_).raw(R"({"doubleValue":)").number(value).raw("}}");
  return *this;
}

SpanWriter& SpanWriter::strings(std::string_view key, std::span<const std::string_view> values) {
  this->key(key);
  codec::JsonWriter w(out_);
  w.raw(R"({"arrayValue":{"values":[)");
  bool first = true;
  for (std::string_view v : values) {
    w.raw(first ? R"({"stringValue":)" : R"(,{"stringValue":)").string(v).ch('}');
    first = false;
  }
  w.raw("]}}}");
  return *this;
}

void SpanWriter::finish(SpanStatus status, std::string_view message) {
  codec::JsonWriter w(out_);
  w.raw(R"(],"status":{)");
  if (status != SpanStatus::kUnset) {
    w.raw(R"("code":)").number(static_cast<std::int64_t>(status));
    if (status == SpanStatus::kError && !message.empty()) {
      w.raw(R"(,"message":)").string(message);
    }
  }
  w.raw("}}");
}

std::string export_request(const ResourceInfo& resource, std::span<const std::string> spans) {
  std::size_t size = 256;
  for (const std::string& s : spans) {
    size += s.size() + 1;
  }
  std::string out;
  out.reserve(size);
  codec::JsonWriter w(out);
  w.raw(R"({"resourceSpans":[{"resource":{"attributes":[)");
  string_attribute(w, "service.name", resource.service_name, true);
  if (!resource.service_version.empty()) {
    string_attribute(w, "service.version", resource.service_version, false);
  }
  if (!resource.instance_id.empty()) {
    string_attribute(w, "service.instance.id", resource.instance_id, false);
  }
  w.raw(R"(]},"scopeSpans":[{"scope":{"name":"sluice")");
  if (!resource.service_version.empty()) {
    w.raw(R"(,"version":)").string(resource.service_version);
  }
  w.raw(R"(},"spans":[)");
  bool first = true;
  for (const std::string& s : spans) {
    if (!first) {
      out.push_back(',');
    }
    first = false;
    out.append(s);
  }
  w.raw("]}]}]}");
  return out;
}

}  // namespace sluice::observability
