#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace sluice::guardrails {

// One string value of a JSON document, as the walk hands it over: the member it belongs to (an
// array's strings belong to the array's member; "" at the top), and its text unescaped.
struct JsonString {
  std::string_view key;
  std::string_view text;
  // The member each enclosing container belongs to, outermost first (an array's objects belong
  // to the array's member; "" at the top).
  std::span<const std::string_view> within;
};

// What the visitor makes of a string: nullopt leaves it as it is; a value replaces it (written
// back escaped).
using JsonStringVisitor = std::function<std::optional<std::string>(const JsonString&)>;

// Walks every string value of `json` (keys are not values) in document order, without building
// a document: the caller's body of any protocol. `json` must be valid JSON (the request was
// decoded before); on bytes that are not, the walk stops where it lost its way. Returns the
// document with the visitor's replacements, every other byte as it was, or nullopt when nothing
// was replaced.
std::optional<std::string> rewrite_strings(std::string_view json, const JsonStringVisitor& visit);

// `escaped`: the bytes between a JSON string's quotes. Appends its text to `out`; false on an
// escape that is not JSON's.
bool unescape_json(std::string_view escaped, std::string& out);

}  // namespace sluice::guardrails
