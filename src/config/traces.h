#pragma once

#include "config/config.h"

namespace sluice::config {

class YamlField;

// `traces:` (OTLP/HTTP export); present means enabled. Throws ConfigError.
TraceSettings load_traces(const YamlField& field);

}  // namespace sluice::config
