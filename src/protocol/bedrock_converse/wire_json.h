#pragma once

#include <optional>
#include <string_view>

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include "core/result.h"
#include "ir/request.h"
#include "protocol/bedrock_converse/conventions.h"
#include "protocol/drift.h"
#include "protocol/wire_json.h"

// Readers for Converse answer JSON shared by decode_response and StreamDecoder. Internal to
// this folder. Every failure is ErrorKind::kUpstreamProtocol: these bytes come from an upstream.
namespace sluice::protocol::bedrock_converse::wire {

// The string at `key`, or nullopt when absent, null or not a string (protocol/wire_json.h).
using protocol::wire::string_at;

// A ContentBlock of an answer (a union: one member): text -> kText; toolUse {toolUseId, name,
// input (an object -> compact JSON text; absent or null -> "{}")} -> kToolCall;
// reasoningContent {reasoningText {text, signature}} -> kReasoning, {redactedContent} ->
// kRedactedReasoning (signature = the data). Other members (citationsContent, image, document,
// a server-side toolUse whose type is server_tool_use, ...) fail with "cannot translate
// content block '<member>'". `drift` counts unknown fields of the toolUse and reasoningText
// objects.
Result<ir::ContentPart> content_block(const boost::json::value& block, Drift* drift);

// Merges a TokenUsage object into `usage` (protocol/wire_json.h read_usage_counts): fields
// present overwrite, absent ones stay; counts must be non-negative integers; unknown fields
// count in `drift`. Returns the merged `usage` in IR terms (from_wire_usage).
Result<ir::Usage> merge_usage(const boost::json::value& value, WireUsage& usage, Drift& drift);

// The stop sequence in additionalModelResponseFields when the model reported one: Claude's
// `stop_sequence`, at the top (as recorded from a non-streaming Converse) or under `delta` (the
// path "/delta/stop_sequence", as recorded from ConverseStream); "" otherwise.
std::string_view stop_sequence(const boost::json::object& answer_or_event);

// The fields the decoders know per level, read or skipped on purpose (service-2.json
// ConverseResponse, Message, ToolUseBlock, ReasoningTextBlock, TokenUsage and the stream
// events); anything else is schema drift (protocol/drift.h).
namespace known {

inline constexpr std::string_view kAnswer[] = {
    "output", "stopReason",        "usage",       "metrics", "additionalModelResponseFields",
    "trace",  "performanceConfig", "serviceTier",
};
inline constexpr std::string_view kMessage[] = {"role", "content"};
inline constexpr std::string_view kToolUse[] = {"toolUseId", "name", "input", "type"};
inline constexpr std::string_view kReasoningText[] = {"text", "signature"};
// TokenUsage, plus the *InputTokenCount duplicates of the cache counts recorded from the live
// service (tests/fixtures/bedrock/converse-cache-*.json) and serverToolUsage.
inline constexpr std::string_view kUsage[] = {
    "inputTokens",
    "outputTokens",
    "totalTokens",
    "cacheReadInputTokens",
    "cacheWriteInputTokens",
    "cacheDetails",
    "cacheReadInputTokenCount",
    "cacheWriteInputTokenCount",
    "serverToolUsage",
};
// The payload of any ConverseStream event ("p" is the service's random-length padding).
inline constexpr std::string_view kEvent[] = {
    "p",
    "role",
    "contentBlockIndex",
    "start",
    "delta",
    "stopReason",
    "additionalModelResponseFields",
    "usage",
    "metrics",
    "trace",
    "performanceConfig",
    "serviceTier",
};
// ContentBlockDelta (a union): what the stream decoder translates or refuses by name.
inline constexpr std::string_view kDelta[] = {
    "text", "toolUse", "reasoningContent", "citation", "image", "toolResult",
};
inline constexpr std::string_view kReasoningDelta[] = {"text", "signature", "redactedContent"};
inline constexpr std::string_view kToolUseStart[] = {"toolUseId", "name", "type"};

}  // namespace known

}  // namespace sluice::protocol::bedrock_converse::wire
