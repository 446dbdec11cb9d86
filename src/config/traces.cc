#include "config/traces.h"

#include "config/loader.h"
#include "config/scalars.h"

namespace sluice::config {

TraceSettings load_traces(const YamlField& field) {
  const YamlMap m = field.map({"endpoint", "service_name", "sample_ratio", "queue_capacity",
                               "batch_size", "export_interval_ms", "export_timeout_ms", "headers"});
  TraceSettings t;
  t.enabled = true;
  const YamlField endpoint = m.required("endpoint");
  t.endpoint = endpoint.text();
  if (!t.endpoint.starts_with("http://") && !t.endpoint.starts_with("https://")) {
    endpoint.fail("expected an http:// or https:// URL of an OTLP/HTTP traces endpoint");
  }
  if (auto f = m.get("service_name")) {
    t.service_name = f->text();
    if (t.service_name.empty()) {
      f->fail("empty service name");
    }
  }
  if (auto f = m.get("sample_ratio")) {
    t.sample_ratio = ratio(*f, 0.0, 1.0);
  }
  if (auto f = m.get("queue_capacity")) {
    t.queue_capacity = static_cast<std::uint32_t>(f->unsigned_in(16, 1u << 22));
  }
  if (auto f = m.get("batch_size")) {
    t.batch_size = static_cast<std::uint32_t>(f->unsigned_in(1, 8192));
  }
  if (auto f = m.get("export_interval_ms")) {
    t.export_interval = f->millis_in(10, 600000);
  }
  if (auto f = m.get("export_timeout_ms")) {
    t.export_timeout = f->millis_in(10, 600000);
  }
  if (auto f = m.get("headers")) {
    for (auto& [name, value] : f->entries()) {
      const std::string header = name.literal_text();
      if (!is_header_name(header)) {
        name.fail("invalid header name " + in_quotes(header));
      }
      t.headers.emplace_back(header, value.text());
    }
  }
  return t;
}

}  // namespace sluice::config
