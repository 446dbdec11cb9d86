#pragma once

#include "config/config.h"

namespace sluice::config {

class YamlField;

// `metering:` (the usage sink and the price catalogue). Throws ConfigError.
MeteringSettings load_metering(const YamlField& field);

}  // namespace sluice::config
