#include "config/access_log.h"

#include "config/loader.h"

namespace sluice::config {

AccessLogSettings load_access_log(const YamlField& field, std::vector<std::string>& notes) {
  const YamlMap m = field.map({"enabled", "path", "payloads"});
  AccessLogSettings s;
  if (auto f = m.get("enabled")) {
    s.enabled = f->boolean();
  }
  if (auto f = m.get("path")) {
    s.path = f->text();
  }
  if (auto f = m.get("payloads")) {
    s.payloads = f->boolean();
    if (s.payloads) {
      notes.push_back(
          "access_log.payloads is on: prompts and answers are written to the access log "
          "(not for production)");
    }
  }
  return s;
}

}  // namespace sluice::config
