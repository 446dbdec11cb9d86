#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "config/guardrails.h"
#include "core/error.h"
#include "core/result.h"
#include "guardrails/detector.h"
#include "guardrails/pseudonyms.h"

namespace sluice::guardrails {

using Action = config::GuardrailAction;
std::string_view to_string(Action action);

// A config policy compiled: its detectors built (patterns compiled by RE2) with their actions.
// Built with the snapshot, shared by every worker, never changed.
class Policy {
 public:
  struct Rule {
    std::unique_ptr<Detector> detector;
    Action action = Action::kBlock;
  };

  // The policy, or the error that makes the config unusable (an unknown built-in, a pattern
  // RE2 refuses), naming the detector's place in the file.
  static Result<std::shared_ptr<const Policy>> compile(const config::GuardrailPolicy& config);

  const std::string& name() const { return name_; }
  std::span<const Rule> rules() const { return rules_; }
  std::uint16_t block_status() const { return block_status_; }
  Action uninspected() const { return uninspected_; }
  bool input() const { return input_; }
  bool output() const { return output_; }
  std::size_t hold_back_chars() const { return hold_back_chars_; }
  // 0: no time bound.
  std::chrono::milliseconds hold_back_time() const { return hold_back_time_; }

  // Its external checkers (pipeline/filters/guardrail_checks.h runs them; the detectors above
  // are the in-process ones).
  struct External {
    std::string name;
    config::ExternalChecker checker;
    Action action = Action::kBlock;
  };
  std::span<const External> externals() const { return externals_; }

 private:
  std::string name_;
  std::vector<Rule> rules_;
  std::vector<External> externals_;
  std::uint16_t block_status_ = 400;
  Action uninspected_ = Action::kFlag;
  bool input_ = true;
  bool output_ = false;
  std::size_t hold_back_chars_ = 64;
  std::chrono::milliseconds hold_back_time_{0};
};

using Policies = std::vector<std::shared_ptr<const Policy>>;

// What the policies found in one request: counts per policy, detector and action (never the
// text), and the block, if one.
struct Verdict {
  struct Hit {
    const Policy* policy = nullptr;
    std::string_view detector;  // "uninspected" for content not inspected
    Action action = Action::kFlag;
    std::uint32_t count = 0;
  };
  std::vector<Hit> hits;
  std::uint32_t uninspected = 0;

  // The first block, or null.
  const Hit* block() const { return block_at < hits.size() ? &hits[block_at] : nullptr; }
  std::size_t block_at = static_cast<std::size_t>(-1);

  bool empty() const { return hits.empty(); }
  // "pii/email:redact=2,secrets/openai_key:block=1".
  std::string summary() const;
};

// Applies a request's policies to its texts one by one, numbering placeholders across the whole
// request (the same e-mail address is [EMAIL_1] wherever it appears, so the model can still tell
// one person from two), redacted and pseudonymised alike. One per request.
class Inspector {
 public:
  explicit Inspector(const Policies& policies);
  explicit Inspector(Policies&&) = delete;  // it keeps a reference

  // One text the model would see: the text with its redactions, or nullopt when it stays as it
  // is. Once a block was found, nothing more is inspected.
  std::optional<std::string> inspect(std::string_view text);
  // Content the detectors cannot read (an image, a file): counted, and blocked where a policy
  // says so.
  void uninspected();

  bool blocked() const { return verdict_.block() != nullptr; }
  const Verdict& verdict() const { return verdict_; }
  // The placeholders of pseudonymised finds, to be put back in the answer.
  Pseudonyms take_pseudonyms() { return std::move(pseudonyms_); }

  // What the policies find in `text`, in order, overlapping finds made one under the most
  // severe action among them; not counted (the stream guard counts each find once, though it
  // sees a text grow). Valid until the next call.
  struct Find {
    std::uint32_t begin = 0;
    std::uint32_t end = 0;
    Action action = Action::kFlag;
    const Policy* policy = nullptr;
    const Detector* detector = nullptr;
  };
  std::span<const Find> find(std::string_view text);
  // Counts a find into the verdict, as `action` (a stream counts a redaction it cannot make as
  // the block it becomes).
  void record(const Find& find, Action action);

 private:
  void count(const Policy& policy, std::string_view detector, Action action);
  // `first_seen`: set when `original` got a new number.
  std::string_view placeholder_number(std::string_view label, std::string_view original,
                                      bool& first_seen);

  const Policies& policies_;
  // Which policy and rule each Span::detector names.
  std::vector<std::pair<const Policy*, const Policy::Rule*>> rules_;
  std::vector<Span> spans_;
  std::vector<Find> found_;
  // Placeholders given so far: (label, original) -> number.
  std::vector<std::pair<std::string, std::string>> placeholders_;
  std::string number_;
  Pseudonyms pseudonyms_;
  Verdict verdict_;
};

}  // namespace sluice::guardrails
