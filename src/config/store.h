#pragma once

#include "config/config.h"

namespace sluice::config {

class YamlField;

// `store:` (`none`, `{ sqlite: PATH }` or `{ postgres: URL }`). Throws ConfigError; messages
// never show the URL.
StoreSettings load_store(const YamlField& field);

}  // namespace sluice::config
