// guardrails/: every built-in detector and a keyword list on arbitrary text, then a policy that
// redacts all of them over the same bytes as a JSON body. A detector's spans must lie inside
// the text, be non-empty and come in order without overlapping; a body that is valid JSON must
// stay valid JSON after redaction, with no string holding a text the policy redacted. Then the
// same text as a stream of chat deltas cut where the input says, through the stream guard with
// a blocking policy: a clean stream goes out whole, and when the whole text holds a match no
// longer than the hold-back window, the stream blocks before any byte of it went out. (The
// window may block a text whose match only its cut context made, a digit run cut in two; it
// never lets one through.) Last, the stream restorer over the same cut: what goes out reads as
// the whole text with its placeholders put back, wherever a delta cut one.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json/parse.hpp>

#include "../unit/support/chat_deltas.h"
#include "fuzz_support.h"
#include "guardrails/body.h"
#include "guardrails/detector.h"
#include "guardrails/policy.h"
#include "guardrails/stream_guard.h"
#include "guardrails/stream_restore.h"

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

constexpr std::size_t kHoldBack = 32;  // longer than a card with separators (23)
// The stream checks cut their text into deltas as short as one character: a few KB is room for
// every cut and keeps the target fast.
constexpr std::size_t kStreamChars = 2048;

const g::Policies& block_cards_and_words() {
  static const g::Policies policies = [] {
    sluice::config::GuardrailPolicy p;
    p.name = "fuzz-out";
    p.output = true;
    p.hold_back_chars = kHoldBack;
    sluice::config::GuardrailDetector card;
    card.name = "payment_card";
    card.action = sluice::config::GuardrailAction::kBlock;
    p.detectors.push_back(card);
    sluice::config::GuardrailDetector words;
    words.kind = sluice::config::GuardrailDetector::Kind::kKeywords;
    words.name = "words";
    words.words = {"falcon", "top secret"};
    words.case_insensitive = true;
    words.action = sluice::config::GuardrailAction::kBlock;
    p.detectors.push_back(words);
    return g::Policies{*g::Policy::compile(p)};
  }();
  return policies;
}

// Printable ASCII without quotes or backslashes, so that a delta's JSON is the text itself.
std::string plain_text(std::string_view input) {
  std::string text;
  for (const char c : input) {
    const auto u = static_cast<unsigned char>(c);
    text += (u < 0x20 || u > 0x7e || c == '"' || c == '\\') ? ' ' : c;
  }
  return text;
}

// The first byte sets the piece sizes (1 to 16 characters), the rest is the text.
void check_stream(std::string_view input) {
  if (input.empty()) return;
  const std::size_t piece = static_cast<unsigned char>(input[0]) % 16 + 1;
  const std::string text = plain_text(input.substr(1, kStreamChars));

  g::Inspector whole(block_cards_and_words());
  const std::span<const g::Inspector::Find> finds = whole.find(text);
  const g::Inspector::Find* first = finds.empty() ? nullptr : &finds.front();

  g::StreamGuard guard(block_cards_and_words(), kHoldBack);
  std::string released;
  bool blocked = false;
  for (std::size_t at = 0; at <= text.size() && !blocked; at += piece) {
    const bool ending = at + piece > text.size();
    std::string data = sluice::guardrails::testing::chat_delta(text.substr(at, piece));
    blocked = !guard.pass(data, ending);
    released += data;
  }
  const std::string out = sluice::guardrails::testing::content_of(released);
  if (!blocked) {
    check(out == text, "a stream that did not block lost or changed text", out);
  }
  if (first != nullptr && first->end - first->begin <= kHoldBack) {
    check(blocked, "a stream let a match through", text);
    check(out.size() <= first->begin, "a byte of the match went out before the block", out);
  }
}

void check_restore(std::string_view input) {
  if (input.empty()) return;
  static const g::Pseudonyms pseudonyms = [] {
    g::Pseudonyms p;
    p.add("[EMAIL_1]", "ann@corp.example");
    p.add("[EMAIL_2]", "bob@mail.example");
    p.add("[NAME_12]", "Ann Smith");
    return p;
  }();
  const std::size_t piece = static_cast<unsigned char>(input[0]) % 7 + 1;
  const std::string text = plain_text(input.substr(1, kStreamChars));
  g::StreamRestorer restorer(pseudonyms);
  std::string out;
  for (std::size_t at = 0; at < text.size(); at += piece) {
    std::string data = sluice::guardrails::testing::chat_delta(text.substr(at, piece));
    restorer.pass(data, false);
    out += data;
  }
  std::string end = "data: [DONE]\n\n";
  restorer.pass(end, true);
  out += end;
  const std::string expected = pseudonyms.restore(text, false).value_or(text);
  check(sluice::guardrails::testing::content_of(out) == expected,
        "a streamed answer restored differently from the whole", out);
  check(out.ends_with("data: [DONE]\n\n"), "the stream's end did not go out last", out);
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
  check_stream(input);
  check_restore(input);

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
