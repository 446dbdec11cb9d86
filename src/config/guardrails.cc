#include "config/guardrails.h"

#include "config/loader.h"
#include "config/yaml_field.h"

namespace sluice::config {
namespace {

GuardrailAction load_action(const YamlField& field) {
  const std::string action = field.text();
  if (action == "block") return GuardrailAction::kBlock;
  if (action == "redact") return GuardrailAction::kRedact;
  if (action == "pseudonymise" || action == "pseudonymize") return GuardrailAction::kPseudonymise;
  if (action == "flag") return GuardrailAction::kFlag;
  field.fail("expected \"block\", \"redact\", \"pseudonymise\" or \"flag\", got " +
             in_quotes(action));
}

GuardrailDetector load_detector(const YamlField& field) {
  const YamlMap m =
      field.map({"builtin", "regex", "keywords", "name", "action", "case_insensitive"});
  GuardrailDetector d;
  d.source = field.where();
  const int kinds = static_cast<int>(m.has("builtin")) + static_cast<int>(m.has("regex")) +
                    static_cast<int>(m.has("keywords"));
  if (kinds != 1) {
    field.fail(
        "a detector is exactly one of `builtin: <name>`, `regex: <pattern>` or "
        "`keywords: [words]`");
  }
  if (auto f = m.get("builtin")) {
    d.kind = GuardrailDetector::Kind::kBuiltin;
    d.name = f->text();
  } else if (auto f = m.get("regex")) {
    d.kind = GuardrailDetector::Kind::kRegex;
    d.pattern = f->literal_text();
    if (d.pattern.empty()) f->fail("the pattern is empty");
  } else if (auto f = m.get("keywords")) {
    d.kind = GuardrailDetector::Kind::kKeywords;
    for (const YamlField& word : f->one_or_many()) {
      d.words.push_back(word.literal_text());
      if (d.words.back().empty()) word.fail("an empty word matches everything");
    }
    if (d.words.empty()) f->fail("the word list is empty");
  }
  if (auto f = m.get("name")) {
    if (d.kind == GuardrailDetector::Kind::kBuiltin) {
      f->fail("a built-in detector is named by `builtin:`");
    }
    d.name = f->text();
  } else if (d.kind != GuardrailDetector::Kind::kBuiltin) {
    m.self().fail("a regex or keywords detector needs a `name:` (reports and placeholders use it)");
  }
  if (auto f = m.get("action")) d.action = load_action(*f);
  if (auto f = m.get("case_insensitive")) d.case_insensitive = f->boolean();
  return d;
}

GuardrailPolicy load_policy(const YamlField& field) {
  const YamlMap m = field.map(
      {"name", "detectors", "block_status", "uninspected", "direction", "hold_back_chars"});
  GuardrailPolicy p;
  p.source = field.where();
  p.name = m.required("name").text();
  if (p.name.empty()) m.required("name").fail("a policy needs a name");
  const YamlField detectors = m.required("detectors");
  for (const YamlField& item : detectors.items()) {
    p.detectors.push_back(load_detector(item));
  }
  if (p.detectors.empty()) detectors.fail("a policy needs at least one detector");
  if (auto f = m.get("block_status")) {
    p.block_status = static_cast<std::uint16_t>(f->unsigned_in(400, 499));
  }
  if (auto f = m.get("direction")) {
    const std::string direction = f->text();
    if (direction != "input" && direction != "output" && direction != "both") {
      f->fail("expected \"input\", \"output\" or \"both\", got " + in_quotes(direction));
    }
    p.input = direction != "output";
    p.output = direction != "input";
  }
  if (p.output) {
    for (const GuardrailDetector& d : p.detectors) {
      if (d.action == GuardrailAction::kPseudonymise) {
        detectors.fail("detector " + in_quotes(d.name) +
                       ": pseudonymise works on requests (its placeholders are put back in the "
                       "answer); a policy with `direction: " +
                       std::string(p.input ? "both" : "output") + "` cannot use it");
      }
    }
  }
  if (auto f = m.get("hold_back_chars")) {
    p.hold_back_chars = static_cast<std::uint32_t>(f->unsigned_in(1, 65536));
  }
  if (auto f = m.get("uninspected")) {
    const GuardrailAction a = load_action(*f);
    if (a == GuardrailAction::kRedact || a == GuardrailAction::kPseudonymise)
      f->fail("images and files cannot be redacted: flag or block");
    p.uninspected = a;
  }
  return p;
}

}  // namespace

GuardrailsConfig load_guardrails(const YamlField& field) {
  const YamlMap m = field.map({"policies", "apply", "key_groups"});
  GuardrailsConfig config;
  if (auto f = m.get("policies")) {
    for (const YamlField& item : f->items()) {
      GuardrailPolicy p = load_policy(item);
      if (config.find(p.name) != nullptr) item.fail("a second policy named " + in_quotes(p.name));
      config.policies.push_back(std::move(p));
    }
  }
  if (auto f = m.get("apply")) {
    config.apply = load_route_guardrails(*f, config);
  }
  if (auto f = m.get("key_groups")) {
    for (auto& [group, names] : f->entries()) {
      std::string name = group.literal_text();
      if (name.empty()) group.fail("a key group needs a name");
      config.key_groups.emplace_back(std::move(name), load_route_guardrails(names, config));
    }
  }
  return config;
}

std::vector<std::string> load_route_guardrails(const YamlField& field,
                                               const GuardrailsConfig& known) {
  std::vector<std::string> names;
  for (const YamlField& item : field.one_or_many()) {
    std::string name = item.text();
    if (known.find(name) == nullptr) {
      item.fail("no guardrail policy named " + in_quotes(name) + " (guardrails.policies)");
    }
    names.push_back(std::move(name));
  }
  return names;
}

}  // namespace sluice::config
