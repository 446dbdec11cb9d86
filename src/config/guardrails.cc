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

ExternalChecker load_external(const YamlField& field) {
  const YamlMap m = field.map({"provider", "format", "path", "model", "language", "min_score",
                               "timeout_ms", "on_error", "mode", "stream_window_chars"});
  ExternalChecker c;
  c.provider = m.required("provider").text();
  if (auto f = m.get("format")) {
    const std::string format = f->text();
    if (format == "presidio") {
      c.format = ExternalChecker::Format::kPresidio;
    } else if (format == "openai_moderation") {
      c.format = ExternalChecker::Format::kModeration;
    } else if (format == "generic") {
      c.format = ExternalChecker::Format::kGeneric;
    } else {
      f->fail("expected \"presidio\", \"openai_moderation\" or \"generic\", got " +
              in_quotes(format));
    }
  }
  switch (c.format) {
    case ExternalChecker::Format::kPresidio:
      c.path = "/analyze";
      break;
    case ExternalChecker::Format::kModeration:
      c.path = "/moderations";
      break;
    case ExternalChecker::Format::kGeneric:
      c.path = "/check";
      break;
  }
  if (auto f = m.get("path")) {
    c.path = f->text();
    if (c.path.empty() || c.path.front() != '/') f->fail("a path starts with '/'");
    for (const char ch : c.path) {
      if (static_cast<unsigned char>(ch) <= 0x20 || ch == 0x7f) f->fail("a path has no spaces");
    }
  }
  if (auto f = m.get("model")) c.model = f->text();
  if (auto f = m.get("language")) c.language = f->text();
  if (auto f = m.get("min_score")) {
    c.min_score = static_cast<double>(f->unsigned_in(0, 100)) / 100.0;
  }
  if (auto f = m.get("timeout_ms")) {
    c.timeout = std::chrono::milliseconds(f->unsigned_in(1, 60000));
  }
  if (auto f = m.get("on_error")) {
    const std::string mode = f->text();
    if (mode != "block" && mode != "allow") {
      f->fail("expected \"block\" (fail closed) or \"allow\" (fail open), got " + in_quotes(mode));
    }
    c.fail_open = mode == "allow";
  }
  if (auto f = m.get("mode")) {
    const std::string mode = f->text();
    if (mode != "sequential" && mode != "parallel") {
      f->fail(
          "expected \"sequential\" (checked before the request is sent) or \"parallel\" "
          "(checked while the upstream answers), got " +
          in_quotes(mode));
    }
    c.parallel = mode == "parallel";
  }
  if (auto f = m.get("stream_window_chars")) {
    c.stream_window_chars = f->unsigned_in(16, 1 << 20);
  }
  return c;
}

GuardrailDetector load_detector(const YamlField& field) {
  const YamlMap m =
      field.map({"builtin", "regex", "keywords", "external", "name", "action", "case_insensitive"});
  GuardrailDetector d;
  d.source = field.where();
  const int kinds = static_cast<int>(m.has("builtin")) + static_cast<int>(m.has("regex")) +
                    static_cast<int>(m.has("keywords")) + static_cast<int>(m.has("external"));
  if (kinds != 1) {
    field.fail(
        "a detector is exactly one of `builtin: <name>`, `regex: <pattern>`, "
        "`keywords: [words]` or `external: {provider, format}`");
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
  } else if (auto f = m.get("external")) {
    d.kind = GuardrailDetector::Kind::kExternal;
    d.external = load_external(*f);
  }
  if (auto f = m.get("name")) {
    if (d.kind == GuardrailDetector::Kind::kBuiltin) {
      f->fail("a built-in detector is named by `builtin:`");
    }
    d.name = f->text();
  } else if (d.kind != GuardrailDetector::Kind::kBuiltin) {
    m.self().fail(
        "a regex, keywords or external detector needs a `name:` (reports and placeholders use "
        "it)");
  }
  if (auto f = m.get("action")) d.action = load_action(*f);
  if (d.kind == GuardrailDetector::Kind::kExternal && d.action != GuardrailAction::kBlock &&
      d.action != GuardrailAction::kFlag) {
    m.required("action").fail(
        "an external checker flags or blocks (it reports no places in the text to rewrite)");
  }
  if (auto f = m.get("case_insensitive")) d.case_insensitive = f->boolean();
  return d;
}

GuardrailPolicy load_policy(const YamlField& field) {
  const YamlMap m = field.map({"name", "detectors", "block_status", "uninspected", "direction",
                               "hold_back_chars", "hold_back_ms"});
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
      if (d.kind == GuardrailDetector::Kind::kExternal && d.external.parallel) {
        detectors.fail("detector " + in_quotes(d.name) +
                       ": `mode: parallel` runs beside the upstream call, on the request; a "
                       "policy with `direction: " +
                       std::string(p.input ? "both" : "output") +
                       "` checks answers too: make it a policy of its own");
      }
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
  if (auto f = m.get("hold_back_ms")) {
    if (!p.output)
      f->fail(
          "hold_back_ms bounds the hold-back of answers: a `direction: output` or `both` policy's");
    p.hold_back_ms = static_cast<std::uint32_t>(f->unsigned_in(1, 60000));
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
