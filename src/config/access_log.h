#pragma once

#include <string>
#include <vector>

namespace sluice::config {

class YamlField;

struct AccessLogSettings {
  bool enabled = true;
  std::string path;  // empty = stdout
  // Adds request and response bodies to access-log lines (credentials stay redacted). For
  // non-production debugging only: prompts and answers land in the log.
  bool payloads = false;
};

// `access_log:`. Turning payloads on adds a note (prompts land in the log). Throws
// ConfigError.
AccessLogSettings load_access_log(const YamlField& field, std::vector<std::string>& notes);

}  // namespace sluice::config
