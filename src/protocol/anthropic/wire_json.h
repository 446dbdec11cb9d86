#pragma once

#include <optional>
#include <string_view>

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include "core/result.h"
#include "ir/request.h"
#include "protocol/anthropic/conventions.h"
#include "protocol/drift.h"
#include "protocol/wire_json.h"

// Readers for Anthropic response JSON shared by decode_response and StreamDecoder. Internal to
// this folder. Every failure is ErrorKind::kUpstreamProtocol: these bytes come from an upstream.
namespace sluice::protocol::anthropic::wire {

// The string at `key`, or nullopt when absent, null or not a string (protocol/wire_json.h).
using protocol::wire::string_at;

// An Anthropic content block (a `message.content[]` entry or a content_block_start's
// `content_block`): text, thinking, redacted_thinking, tool_use (input -> compact JSON text).
// Other types fail with "cannot translate content block '<type>'".
Result<ir::ContentPart> content_block(const boost::json::value& block);

// Merges a `usage` object into `usage` (protocol/wire_json.h read_usage_counts): fields present
// overwrite, absent fields stay (the message_delta usage of older API versions carries
// output_tokens only); counts must be non-negative integers; unknown fields count in `drift`.
// Returns the merged `usage` in IR terms (from_wire_usage).
Result<ir::Usage> merge_usage(const boost::json::value& value, WireUsage& usage, Drift& drift);

// The Error for an {"type":"error","error":{"type","message"}} object (errors.h error_from_wire).
Error error_event(const boost::json::object& o);

// The fields the answer decoders know per level, read or skipped on purpose; anything else is
// schema drift (protocol/drift.h). Documented fields of the Messages API and its betas.
namespace known {

// A message: the non-streaming answer, message_start's `message`.
inline constexpr std::string_view kMessage[] = {
    "id",          "type",          "role",         "model", "content",
    "stop_reason", "stop_sequence", "stop_details", "usage", "context_management",
    "container",
};
// A content block (any type the decoders translate): text's citations and tool_use's caller
// (programmatic tool calling) are not carried.
inline constexpr std::string_view kBlock[] = {
    "type", "text", "citations", "thinking", "signature", "data", "id", "name", "input", "caller",
};
inline constexpr std::string_view kUsage[] = {
    "input_tokens",
    "output_tokens",
    "cache_creation_input_tokens",
    "cache_read_input_tokens",
    "cache_creation",
    "server_tool_use",
    "service_tier",
    "inference_geo",
};
// A stream event's own object.
inline constexpr std::string_view kEvent[] = {
    "type", "index", "message", "content_block", "delta", "usage", "error",
};
// content_block_delta's `delta`.
inline constexpr std::string_view kBlockDelta[] = {
    "type", "text", "partial_json", "thinking", "signature",
};
// message_delta's `delta`.
inline constexpr std::string_view kMessageDelta[] = {
    "stop_reason",
    "stop_sequence",
    "stop_details",
    "container",
};

}  // namespace known

}  // namespace sluice::protocol::anthropic::wire
