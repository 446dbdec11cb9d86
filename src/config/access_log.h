#pragma once

#include "config/config.h"

namespace sluice::config {

class YamlField;

// `access_log:`. Turning payloads on adds a note (prompts land in the log). Throws
// ConfigError.
AccessLogSettings load_access_log(const YamlField& field, std::vector<std::string>& notes);

}  // namespace sluice::config
