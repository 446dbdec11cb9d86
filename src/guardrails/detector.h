#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace sluice::guardrails {

// Where a detector found something in a text: bytes [begin, end), and which of a policy's
// detectors found it.
struct Span {
  std::uint32_t begin = 0;
  std::uint32_t end = 0;
  std::uint16_t detector = 0;
};

// Finds one kind of thing in text (docs/guardrails.md#detectors). In process, no I/O, linear in
// the text: a guardrail config can never be a ReDoS vector. Shared by every worker: const.
class Detector {
 public:
  virtual ~Detector() = default;
  // The name policies, metrics and logs use: "email", "payment_card", a pattern's own name.
  virtual std::string_view name() const = 0;
  // The placeholder a redaction writes: "EMAIL" -> [EMAIL_1].
  virtual std::string_view label() const = 0;
  // Appends what it finds in `text`, in order and not overlapping, each marked `id`.
  virtual void scan(std::string_view text, std::uint16_t id, std::vector<Span>& out) const = 0;
};

// The built-in detector `name` (builtin_detector_names), or null.
std::unique_ptr<Detector> builtin_detector(std::string_view name);
std::span<const std::string_view> builtin_detector_names();
// The built-ins a policy gets for `pii` and for `secrets`.
std::span<const std::string_view> pii_detector_names();
std::span<const std::string_view> secret_detector_names();

// A regular expression (RE2 syntax: no backreferences or lookaround, matched in linear time),
// or null with `error` set when it does not compile or is too large.
std::unique_ptr<Detector> regex_detector(std::string name, std::string_view pattern,
                                         bool case_insensitive, std::string& error);
// Whole words or phrases (letters next to a match end it: "class" does not match "classic").
std::unique_ptr<Detector> keyword_detector(std::string name, std::span<const std::string> words,
                                           bool case_insensitive, std::string& error);

}  // namespace sluice::guardrails
