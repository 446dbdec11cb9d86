#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace sluice::config {

class YamlField;

// What a guardrail does with what it found (docs/guardrails.md#actions), least to most severe.
enum class GuardrailAction : std::uint8_t {
  kFlag,          // the request goes as it is; the header, the access log and the metrics say so
  kPseudonymise,  // a placeholder goes upstream and the caller's answer has the value back
  kRedact,        // the text is replaced by a typed placeholder ([EMAIL_1]) before it leaves
  kBlock,         // the request is refused with the policy's status; nothing goes upstream
};

// An HTTP service that judges a request's text (docs/guardrails.md#external-checkers), reached
// through a `providers:` entry (its base URL, TLS, pool and api_key).
struct ExternalChecker {
  enum class Format : std::uint8_t {
    kPresidio,    // a Presidio analyzer: POST {text, language} -> [{entity_type, score, ...}]
    kModeration,  // OpenAI's moderation API: POST {input[, model]} -> {results: [{flagged}]}
    kGeneric,     // POST {text, direction} -> {verdict: allow | flag | block, reason}
  };
  std::string provider;
  Format format = Format::kGeneric;
  std::string path;             // after the provider's base URL; default per format
  std::string model;            // kModeration: the moderation model, when the service wants one
  std::string language = "en";  // kPresidio
  double min_score = 0.5;       // kPresidio: the lowest score that counts
  std::chrono::milliseconds timeout{1000};  // the whole exchange
  bool fail_open = false;  // a checker that fails or is skipped lets the request go (flagged)
  // On a request: asked before the request is sent (the default), or at the same time as the
  // upstream, whose answer then waits for the verdict (a block cancels the upstream call).
  bool parallel = false;
  // On a streamed answer: asked each time this many characters of new text came (and at the
  // end), with the policy's hold_back_chars before them as context; the stream holds its text
  // until the checker cleared it.
  std::size_t stream_window_chars = 512;
};

// One detector of a policy: a built-in (`email`, `payment_card`, ... or the sets `pii` and
// `secrets`), a regular expression, a word list, or an external checker.
struct GuardrailDetector {
  enum class Kind : std::uint8_t { kBuiltin, kRegex, kKeywords, kExternal };
  Kind kind = Kind::kBuiltin;
  std::string name;                // kBuiltin: the detector (or set); else the name reports use
  std::string pattern;             // kRegex (RE2 syntax)
  std::vector<std::string> words;  // kKeywords
  bool case_insensitive = false;
  ExternalChecker external;  // kExternal
  GuardrailAction action = GuardrailAction::kBlock;
  std::string source;  // "<file>:<line>", for messages
};

// A named set of detectors with their actions, applied to the text a model would see.
struct GuardrailPolicy {
  std::string name;
  std::vector<GuardrailDetector> detectors;
  // The status of a block (a 4xx; Portkey's 446 is allowed for clients that expect it).
  std::uint16_t block_status = 400;
  // Images, audio and files are not inspected: let them through (kFlag: and say so), or refuse
  // a request that carries one (kBlock).
  GuardrailAction uninspected = GuardrailAction::kFlag;
  // Which way the policy looks: at what a request sends (the default), at what the model
  // answers, or both (`direction: input | output | both`).
  bool input = true;
  bool output = false;
  // On streams, output text is held back this many characters behind the model's newest, so a
  // match that spans events is seen whole before any of it goes out: at least the longest
  // text a detector needs to recognise. Adds about this much text's time to the first token.
  std::uint32_t hold_back_chars = 64;
  // And held at most this long (0: no time bound): text older than it goes out with the next
  // event even when fewer than hold_back_chars followed it. A shorter time to first token for
  // a weaker guarantee (docs/guardrails.md#time-bound).
  std::uint32_t hold_back_ms = 0;
  std::string source;
};

// The config-wide `guardrails:` section: the policies, and those every chat and embeddings route
// applies (`apply`), to which a route's own `guardrails: [names]` adds.
struct GuardrailsConfig {
  std::vector<GuardrailPolicy> policies;
  std::vector<std::string> apply;
  // `key_groups: { research: [pii] }`: policies the requests of a key group's keys go through
  // on every route, in addition to `apply` and the route's own.
  std::vector<std::pair<std::string, std::vector<std::string>>> key_groups;
  const GuardrailPolicy* find(std::string_view name) const {
    for (const GuardrailPolicy& p : policies) {
      if (p.name == name) return &p;
    }
    return nullptr;
  }
};

// Throws ConfigError. Patterns are compiled (and refused) when the snapshot is built.
GuardrailsConfig load_guardrails(const YamlField& field);
// A route's `guardrails:`: policy names, each one `known` (throws ConfigError naming it).
std::vector<std::string> load_route_guardrails(const YamlField& field,
                                               const GuardrailsConfig& known);

}  // namespace sluice::config
