// The operator's detectors: regular expressions and word lists, both matched by RE2 (linear
// time and bounded memory whatever the pattern: a config can slow nothing down exponentially).
#include <re2/re2.h>

#include "guardrails/detector.h"

namespace sluice::guardrails {
namespace {

// A compiled program larger than this is refused: RE2 would build it, but a guardrail that
// costs megabytes per pattern is a mistake in the config.
constexpr int kMaxProgramSize = 20'000;

class PatternDetector final : public Detector {
 public:
  PatternDetector(std::string name, std::unique_ptr<RE2> re, bool words)
      : name_(std::move(name)), label_(name_), re_(std::move(re)), words_(words) {
    for (char& c : label_) {
      c = (c >= 'a' && c <= 'z') ? static_cast<char>(c - 'a' + 'A')
                                 : ((c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ? c : '_');
    }
  }

  std::string_view name() const override { return name_; }
  std::string_view label() const override { return label_; }

  void scan(std::string_view text, std::uint16_t id, std::vector<Span>& out) const override {
    re2::StringPiece input(text.data(), text.size());
    re2::StringPiece match;
    std::size_t from = 0;
    while (from <= text.size() &&
           re_->Match(input, from, text.size(), RE2::UNANCHORED, &match, 1)) {
      const std::size_t begin = static_cast<std::size_t>(match.data() - text.data());
      const std::size_t end = begin + match.size();
      if (end == begin) {
        from = end + 1;  // an empty match finds nothing, and must not stop the walk
        continue;
      }
      if (!words_ || (word_edge(text, begin) && word_edge(text, end))) {
        out.push_back(Span{static_cast<std::uint32_t>(begin), static_cast<std::uint32_t>(end), id});
        from = end;
      } else {
        from = begin + 1;
      }
    }
  }

 private:
  // A word list matches whole words: no letter or digit on either side (RE2's \b is ASCII only;
  // this treats every byte of a multi-byte character as a letter, so "café" is one word).
  static bool word_edge(std::string_view t, std::size_t at) {
    const auto wordish = [](unsigned char c) {
      return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
             c == '_' || c >= 0x80;
    };
    const bool before = at > 0 && wordish(static_cast<unsigned char>(t[at - 1]));
    const bool after = at < t.size() && wordish(static_cast<unsigned char>(t[at]));
    return !(before && after);
  }

  std::string name_;
  std::string label_;
  std::unique_ptr<RE2> re_;
  bool words_;
};

std::unique_ptr<RE2> compile(std::string_view pattern, bool case_insensitive, bool longest,
                             std::string& error) {
  RE2::Options options;
  options.set_longest_match(longest);  // a word list: "classic" before its prefix "class"
  options.set_log_errors(false);
  options.set_case_sensitive(!case_insensitive);
  options.set_max_mem(8 << 20);
  auto re = std::make_unique<RE2>(re2::StringPiece(pattern.data(), pattern.size()), options);
  if (!re->ok()) {
    error = re->error();
    return nullptr;
  }
  if (re->ProgramSize() > kMaxProgramSize) {
    error = "the pattern compiles to " + std::to_string(re->ProgramSize()) +
            " instructions, more than " + std::to_string(kMaxProgramSize);
    return nullptr;
  }
  return re;
}

}  // namespace

std::unique_ptr<Detector> regex_detector(std::string name, std::string_view pattern,
                                         bool case_insensitive, std::string& error) {
  std::unique_ptr<RE2> re = compile(pattern, case_insensitive, false, error);
  if (!re) return nullptr;
  return std::make_unique<PatternDetector>(std::move(name), std::move(re), false);
}

std::unique_ptr<Detector> keyword_detector(std::string name, std::span<const std::string> words,
                                           bool case_insensitive, std::string& error) {
  std::string pattern;
  for (const std::string& word : words) {
    if (word.empty()) continue;
    if (!pattern.empty()) pattern += '|';
    pattern += RE2::QuoteMeta(re2::StringPiece(word.data(), word.size()));
  }
  if (pattern.empty()) {
    error = "the word list is empty";
    return nullptr;
  }
  std::unique_ptr<RE2> re = compile(pattern, case_insensitive, true, error);
  if (!re) return nullptr;
  return std::make_unique<PatternDetector>(std::move(name), std::move(re), true);
}

}  // namespace sluice::guardrails
