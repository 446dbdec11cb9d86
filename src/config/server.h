#pragma once

#include "config/config.h"

namespace sluice::config {

class YamlField;

// `server:` (limits of the listener and of each request). Throws ConfigError.
ServerSettings load_server(const YamlField& field);

}  // namespace sluice::config
