#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "config/guardrails.h"

namespace sluice::guardrails {

// The wire side of an external checker (docs/guardrails.md#external-checkers), without I/O:
// the body it is sent and what its answer says. The exchange itself runs in the chain
// (pipeline/filters/guardrail_checks.h).

// Which text a checker is asked about: a request's, or a model's answer.
enum class Direction : std::uint8_t { kInput, kOutput };

// The JSON body asking `checker` about `text` (a request's or an answer's text, its strings
// joined by newlines). A generic checker is told which (`direction`).
std::string checker_request(const config::ExternalChecker& checker, std::string_view text,
                            Direction direction = Direction::kInput);

// What a checker's answer said.
struct CheckerVerdict {
  enum class Kind : std::uint8_t {
    kClean,     // nothing found
    kFound,     // something found: the detector's action applies (generic: `block` says block)
    kUnusable,  // not an answer of its format: counts as a failure of the checker
  };
  Kind kind = Kind::kUnusable;
  bool block = false;       // kGeneric: the service said block (flag otherwise)
  std::uint32_t count = 0;  // entities (Presidio), 1 otherwise
};

// `body`: the checker's 2xx answer.
CheckerVerdict read_checker_answer(const config::ExternalChecker& checker, std::string_view body);

}  // namespace sluice::guardrails
