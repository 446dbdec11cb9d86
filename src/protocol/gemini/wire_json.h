#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include "core/error.h"
#include "core/result.h"
#include "protocol/gemini/conventions.h"

// Readers for Gemini JSON shared by the codecs of this folder. Internal to it.
namespace sluice::protocol::gemini::wire {

// The member `camel` of `o` (e.g. "maxOutputTokens"), or its snake_case spelling
// ("max_output_tokens"): the API reads JSON through proto3's mapping, which accepts both, and
// its own curl examples use snake_case ("system_instruction", "inline_data"). null counts as
// absent. The camelCase spelling wins when both are present.
const boost::json::value* member(const boost::json::object& o, std::string_view camel);

// The string member, or nullopt when absent, null or not a string. Views point into `o`.
std::optional<std::string_view> string_member(const boost::json::object& o, std::string_view camel);

// A member that must be an object when present: nullptr when absent (or null), `bad` set when
// it is something else.
const boost::json::object* object_member(const boost::json::object& o, std::string_view camel,
                                         bool& bad);

// Reads a `usageMetadata` object into `usage` (fields absent stay 0). kUpstreamProtocol when it
// is not an object or a count is not a non-negative integer.
Result<void> read_usage(const boost::json::value& value, WireUsage& usage);

// The IR usage of `usageMetadata`: read_usage + from_wire_usage.
Result<ir::Usage> ir_usage(const boost::json::value& value);

// Field paths for error messages: join("contents[2]", "parts"), index("contents", 2).
std::string join(std::string_view base, std::string_view field);
std::string index(std::string_view base, std::size_t i);

// A caller's mistake in the API's own words: kBadRequest
// "* GenerateContentRequest.<path>: <problem>", param() = path.
Error request_error(std::string path, std::string_view problem);
// Caller content the IR cannot carry: request_error(path, "'<what>' cannot be translated for
// this model's provider").
Error untranslatable(std::string path, std::string_view what);

// Whether `text` is one JSON object (nesting up to kMaxJsonDepth).
bool is_json_object(std::string_view text);

// When `root` is an error answer ({"error":{"code","message","status"}}), its Error
// (errors.h error_from_wire); nullopt otherwise.
std::optional<Error> upstream_error(const boost::json::object& root);

// The fields of a GenerateContentResponse the answer decoders know per level, read or skipped
// on purpose (camelCase; snake_case spellings match too); anything else is schema drift
// (protocol/drift.h).
namespace known {

inline constexpr std::string_view kResponse[] = {
    "candidates", "promptFeedback", "usageMetadata", "modelVersion",
    "responseId", "createTime",     "modelStatus",   "error",
};
// Safety ratings, citations, grounding and log-probabilities are not carried.
inline constexpr std::string_view kCandidate[] = {
    "content",           "finishReason",     "finishMessage",  "index",
    "safetyRatings",     "citationMetadata", "tokenCount",     "groundingAttributions",
    "groundingMetadata", "avgLogprobs",      "logprobsResult", "urlContextMetadata",
};
inline constexpr std::string_view kContent[] = {"parts", "role"};
// A part of a kind the decoders translate; other kinds are errors, not drift.
inline constexpr std::string_view kPart[] = {"text", "thought", "thoughtSignature", "functionCall"};
inline constexpr std::string_view kUsage[] = {
    "promptTokenCount",
    "cachedContentTokenCount",
    "candidatesTokenCount",
    "thoughtsTokenCount",
    "toolUsePromptTokenCount",
    "totalTokenCount",
    "promptTokensDetails",
    "cacheTokensDetails",
    "candidatesTokensDetails",
    "toolUsePromptTokensDetails",
    "serviceTier",
    "trafficType",
};

}  // namespace known

}  // namespace sluice::protocol::gemini::wire
