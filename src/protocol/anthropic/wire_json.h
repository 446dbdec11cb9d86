#pragma once

#include <optional>
#include <string_view>

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include "core/result.h"
#include "ir/request.h"
#include "protocol/anthropic/conventions.h"

// Readers for Anthropic response JSON shared by decode_response and StreamDecoder. Internal to
// this folder. Every failure is ErrorKind::kUpstreamProtocol: these bytes come from an upstream.
namespace sluice::protocol::anthropic::wire {

// The string at `key`, or nullopt when absent, null or not a string. The view points into `o`.
std::optional<std::string_view> string_at(const boost::json::object& o, std::string_view key);

// An Anthropic content block (a `message.content[]` entry or a content_block_start's
// `content_block`): text, thinking, redacted_thinking, tool_use (input -> compact JSON text).
// Other types fail with "cannot translate content block '<type>'".
Result<ir::ContentPart> content_block(const boost::json::value& block);

// Merges a `usage` object into `usage`: fields present overwrite, absent fields stay (the
// message_delta usage of older API versions carries output_tokens only). Counts must be
// non-negative integers.
Result<void> read_usage(const boost::json::value& value, WireUsage& usage);

// The Error for an {"type":"error","error":{"type","message"}} object (errors.h error_from_wire).
Error error_event(const boost::json::object& o);

}  // namespace sluice::protocol::anthropic::wire
