#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "config/values.h"

namespace sluice::config {

class YamlField;

// OpenTelemetry traces over OTLP/HTTP JSON.
struct TraceSettings {
  bool enabled = false;  // true when `traces:` is present
  std::string endpoint;  // e.g. http://127.0.0.1:4318/v1/traces
  std::string service_name = "sluice";
  double sample_ratio = 1.0;            // of requests without a sampled traceparent
  std::uint32_t queue_capacity = 8192;  // spans waiting for export; beyond it spans are dropped
  std::uint32_t batch_size = 512;
  Millis export_interval{1000};
  Millis export_timeout{5000};
  std::vector<std::pair<std::string, std::string>> headers;  // sent to the collector
};

// `traces:` (OTLP/HTTP export); present means enabled. Throws ConfigError.
TraceSettings load_traces(const YamlField& field);

}  // namespace sluice::config
