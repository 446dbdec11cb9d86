#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "config/values.h"

namespace sluice::config {

class YamlField;

// Keys, key groups and budgets kept in the store (`tenancy:`; docs/tenancy.md). On whenever a
// `store:` is configured, unless `tenancy: { enabled: false }`; without a store there is none.
struct TenancySettings {
  bool enabled = false;
  // How often each instance asks the store whether keys or groups changed (one small query);
  // a revocation reaches every instance within about this long.
  Millis refresh{1000};
  // How often the spend of every budget is re-read from the usage ledger (one grouped query).
  // Between reads an instance adds what its own requests cost.
  Millis spend_refresh{5000};
  // Percentages of a budget at which an event is logged and sent to the webhook, once per
  // period each; increasing, 1..1000.
  std::vector<std::uint32_t> budget_thresholds{80, 100};
  std::string webhook_url;  // "" = no webhook; http:// or https://
  Millis webhook_timeout{2000};
};

// `tenancy:` (null when absent: on whenever a store is configured). Read after `store:`,
// which it needs: `has_store`. Throws ConfigError.
TenancySettings load_tenancy(const YamlField* field, bool has_store);

}  // namespace sluice::config
