#include "guardrails/policy.h"

#include <algorithm>

namespace sluice::guardrails {
namespace {

// Whether a find's text is replaced by a placeholder.
bool rewrites(Action action) {
  return action == Action::kRedact || action == Action::kPseudonymise;
}

}  // namespace

std::string_view to_string(Action action) {
  switch (action) {
    case Action::kFlag:
      return "flag";
    case Action::kPseudonymise:
      return "pseudonymise";
    case Action::kRedact:
      return "redact";
    case Action::kBlock:
      return "block";
  }
  return "flag";
}

Result<std::shared_ptr<const Policy>> Policy::compile(const config::GuardrailPolicy& config) {
  auto policy = std::make_shared<Policy>();
  policy->name_ = config.name;
  policy->block_status_ = config.block_status;
  policy->uninspected_ = config.uninspected;
  policy->input_ = config.input;
  policy->output_ = config.output;
  policy->hold_back_chars_ = config.hold_back_chars;
  policy->hold_back_time_ = std::chrono::milliseconds(config.hold_back_ms);
  const auto refuse = [&](const config::GuardrailDetector& d, std::string_view why) {
    return Error(ErrorKind::kInternal,
                 d.source + ": guardrail policy \"" + config.name + "\": " + std::string(why));
  };
  for (const config::GuardrailDetector& d : config.detectors) {
    std::string error;
    switch (d.kind) {
      case config::GuardrailDetector::Kind::kBuiltin: {
        std::span<const std::string_view> names;
        if (d.name == "pii") {
          names = pii_detector_names();
        } else if (d.name == "secrets") {
          names = secret_detector_names();
        }
        if (!names.empty()) {
          for (std::string_view name : names) {
            policy->rules_.push_back(Rule{builtin_detector(name), d.action});
          }
          break;
        }
        std::unique_ptr<Detector> detector = builtin_detector(d.name);
        if (!detector) {
          std::string known = "pii, secrets";
          for (std::string_view name : builtin_detector_names()) {
            known += ", ";
            known += name;
          }
          return refuse(d, "unknown built-in detector \"" + d.name + "\" (known: " + known + ")");
        }
        policy->rules_.push_back(Rule{std::move(detector), d.action});
        break;
      }
      case config::GuardrailDetector::Kind::kExternal:
        policy->externals_.push_back(External{d.name, d.external, d.action});
        break;
      case config::GuardrailDetector::Kind::kRegex: {
        std::unique_ptr<Detector> detector =
            regex_detector(d.name, d.pattern, d.case_insensitive, error);
        if (!detector) return refuse(d, "regex \"" + d.name + "\": " + error);
        policy->rules_.push_back(Rule{std::move(detector), d.action});
        break;
      }
      case config::GuardrailDetector::Kind::kKeywords: {
        std::unique_ptr<Detector> detector =
            keyword_detector(d.name, d.words, d.case_insensitive, error);
        if (!detector) return refuse(d, "keywords \"" + d.name + "\": " + error);
        policy->rules_.push_back(Rule{std::move(detector), d.action});
        break;
      }
    }
  }
  return std::shared_ptr<const Policy>(std::move(policy));
}

std::string Verdict::summary() const {
  std::string out;
  for (const Hit& hit : hits) {
    if (!out.empty()) out += ',';
    out += hit.policy->name();
    out += '/';
    out += hit.detector;
    out += ':';
    out += to_string(hit.action);
    out += '=';
    out += std::to_string(hit.count);
  }
  return out;
}

Inspector::Inspector(const Policies& policies) : policies_(policies) {
  for (const auto& policy : policies_) {
    for (const Policy::Rule& rule : policy->rules()) {
      rules_.emplace_back(policy.get(), &rule);
    }
  }
}

void Inspector::count(const Policy& policy, std::string_view detector, Action action) {
  for (Verdict::Hit& hit : verdict_.hits) {
    if (hit.policy == &policy && hit.detector == detector && hit.action == action) {
      ++hit.count;
      return;
    }
  }
  verdict_.hits.push_back(Verdict::Hit{&policy, detector, action, 1});
  if (action == Action::kBlock && !blocked()) {
    verdict_.block_at = verdict_.hits.size() - 1;
  }
}

void Inspector::uninspected() {
  ++verdict_.uninspected;
  for (const auto& policy : policies_) {
    count(*policy, "uninspected", policy->uninspected());
  }
}

std::string_view Inspector::placeholder_number(std::string_view label, std::string_view original,
                                               bool& first_seen) {
  std::size_t same_label = 0;
  for (const auto& [l, o] : placeholders_) {
    if (l == label) {
      ++same_label;
      if (o == original) {
        number_ = std::to_string(same_label);
        return number_;
      }
    }
  }
  first_seen = true;
  placeholders_.emplace_back(std::string(label), std::string(original));
  number_ = std::to_string(same_label + 1);
  return number_;
}

std::span<const Inspector::Find> Inspector::find(std::string_view text) {
  found_.clear();
  if (text.empty() || rules_.empty()) {
    return found_;
  }
  spans_.clear();
  for (std::size_t i = 0; i < rules_.size(); ++i) {
    rules_[i].second->detector->scan(text, static_cast<std::uint16_t>(i), spans_);
  }
  std::sort(spans_.begin(), spans_.end(), [](const Span& a, const Span& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.end > b.end;
  });
  // Overlapping finds become one, under the most severe action among them (a card number inside
  // a blocked pattern is blocked; a redaction covers everything any detector saw).
  for (const Span& s : spans_) {
    const auto& [policy, rule] = rules_[s.detector];
    if (!found_.empty() && s.begin < found_.back().end) {
      Find& last = found_.back();
      last.end = std::max(last.end, s.end);
      if (rule->action > last.action) {
        last.action = rule->action;
        last.policy = policy;
        last.detector = rule->detector.get();
      }
      continue;
    }
    found_.push_back(Find{s.begin, s.end, rule->action, policy, rule->detector.get()});
  }
  return found_;
}

void Inspector::record(const Find& find, Action action) {
  count(*find.policy, find.detector->name(), action);
}

std::optional<std::string> Inspector::inspect(std::string_view text) {
  if (blocked()) {
    return std::nullopt;
  }
  const std::span<const Find> finds = find(text);
  bool redacts = false;
  for (const Find& f : finds) {
    record(f, f.action);
    redacts = redacts || rewrites(f.action);
  }
  if (blocked() || !redacts) {
    return std::nullopt;
  }
  std::string out;
  out.reserve(text.size());
  std::size_t copied = 0;
  for (const Find& f : finds) {
    if (!rewrites(f.action)) continue;
    out.append(text.substr(copied, f.begin - copied));
    const std::string_view label = f.detector->label();
    const std::string_view original = text.substr(f.begin, f.end - f.begin);
    const std::size_t placeholder = out.size();
    out += '[';
    out += label;
    out += '_';
    bool first_seen = false;
    out += placeholder_number(label, original, first_seen);
    out += ']';
    if (first_seen && f.action == Action::kPseudonymise) {
      pseudonyms_.add(out.substr(placeholder), std::string(original));
    }
    copied = f.end;
  }
  out.append(text.substr(copied));
  return out;
}

}  // namespace sluice::guardrails
