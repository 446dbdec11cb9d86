#pragma once

#include "config/config.h"

namespace sluice::config {

class YamlField;

// `tenancy:` (null when absent: on whenever a store is configured). Read after `store:`,
// which it needs: `has_store`. Throws ConfigError.
TenancySettings load_tenancy(const YamlField* field, bool has_store);

}  // namespace sluice::config
