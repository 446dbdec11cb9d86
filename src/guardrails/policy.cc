#include "guardrails/policy.h"

#include <algorithm>

namespace sluice::guardrails {

std::string_view to_string(Action action) {
  switch (action) {
    case Action::kFlag:
      return "flag";
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

std::string_view Inspector::placeholder_number(std::string_view label, std::string_view original) {
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
  placeholders_.emplace_back(std::string(label), std::string(original));
  number_ = std::to_string(same_label + 1);
  return number_;
}

std::optional<std::string> Inspector::inspect(std::string_view text) {
  if (blocked() || text.empty() || rules_.empty()) {
    return std::nullopt;
  }
  spans_.clear();
  for (std::size_t i = 0; i < rules_.size(); ++i) {
    rules_[i].second->detector->scan(text, static_cast<std::uint16_t>(i), spans_);
  }
  if (spans_.empty()) {
    return std::nullopt;
  }
  std::sort(spans_.begin(), spans_.end(), [](const Span& a, const Span& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.end > b.end;
  });
  // Overlapping finds become one, under the most severe action among them (a card number inside
  // a blocked pattern is blocked; a redaction covers everything any detector saw).
  found_.clear();
  for (const Span& s : spans_) {
    const Action action = rules_[s.detector].second->action;
    if (!found_.empty() && s.begin < found_.back().span.end) {
      Found& last = found_.back();
      last.span.end = std::max(last.span.end, s.end);
      if (action > last.action) {
        last.action = action;
        last.span.detector = s.detector;
      }
      continue;
    }
    found_.push_back(Found{s, action});
  }
  bool redacts = false;
  for (const Found& f : found_) {
    const auto& [policy, rule] = rules_[f.span.detector];
    count(*policy, rule->detector->name(), f.action);
    redacts = redacts || f.action == Action::kRedact;
  }
  if (blocked() || !redacts) {
    return std::nullopt;
  }
  std::string out;
  out.reserve(text.size());
  std::size_t copied = 0;
  for (const Found& f : found_) {
    if (f.action != Action::kRedact) continue;
    out.append(text.substr(copied, f.span.begin - copied));
    const std::string_view label = rules_[f.span.detector].second->detector->label();
    out += '[';
    out += label;
    out += '_';
    out += placeholder_number(label, text.substr(f.span.begin, f.span.end - f.span.begin));
    out += ']';
    copied = f.span.end;
  }
  out.append(text.substr(copied));
  return out;
}

}  // namespace sluice::guardrails
