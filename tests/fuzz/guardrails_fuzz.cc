// guardrails/: every built-in detector and a keyword list on arbitrary text, then a policy that
// redacts all of them over the same bytes as a JSON body. A detector's spans must lie inside
// the text, be non-empty and come in order without overlapping; a body that is valid JSON must
// stay valid JSON after redaction, with no string holding a text the policy redacted.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json/parse.hpp>

#include "fuzz_support.h"
#include "guardrails/body.h"
#include "guardrails/detector.h"
#include "guardrails/policy.h"

namespace {

using sluice::fuzz::check;
namespace g = sluice::guardrails;

const g::Policies& redact_all() {
  static const g::Policies policies = [] {
    sluice::config::GuardrailPolicy p;
    p.name = "fuzz";
    for (const char* set : {"pii", "secrets"}) {
      sluice::config::GuardrailDetector d;
      d.name = set;
      d.action = sluice::config::GuardrailAction::kRedact;
      p.detectors.push_back(d);
    }
    sluice::config::GuardrailDetector words;
    words.kind = sluice::config::GuardrailDetector::Kind::kKeywords;
    words.name = "words";
    words.words = {"secret", "top secret", "falcon"};
    words.case_insensitive = true;
    words.action = sluice::config::GuardrailAction::kRedact;
    p.detectors.push_back(words);
    return g::Policies{*g::Policy::compile(p)};
  }();
  return policies;
}

void check_spans(std::string_view text) {
  std::vector<g::Span> spans;
  for (std::string_view name : g::builtin_detector_names()) {
    std::unique_ptr<g::Detector> d = g::builtin_detector(name);
    spans.clear();
    d->scan(text, 7, spans);
    std::uint32_t last_end = 0;
    for (const g::Span& s : spans) {
      check(s.begin < s.end && s.end <= text.size(), "a span outside the text", name);
      check(s.begin >= last_end, "spans out of order or overlapping", name);
      check(s.detector == 7, "a span with another detector's id", name);
      last_end = s.end;
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  check_spans(input);

  g::Inspector text_inspector(redact_all());
  if (std::optional<std::string> out = text_inspector.inspect(input)) {
    check(!text_inspector.blocked(), "a redact-only policy blocked");
  }

  boost::system::error_code ec;
  boost::json::parse(input, ec);
  if (ec) {
    return 0;
  }
  g::Inspector inspector(redact_all());
  std::optional<std::string> out = g::inspect_body(input, inspector);
  if (out) {
    boost::json::parse(*out, ec);
    check(!ec, "a redacted body is not valid JSON", *out);
  }
  return 0;
}
