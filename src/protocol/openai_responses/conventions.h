#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include "codec/json_writer.h"
#include "core/error.h"
#include "core/result.h"
#include "ir/response.h"
#include "ir/usage.h"
#include "protocol/protocol_id.h"
#include "protocol/wire_json.h"

// What the OpenAI Responses codecs share: the protocol id, usage, ids and statuses (errors.h
// has the errors). Pure functions; checked against openai/openai-openapi (openapi.yaml:
// Response, ResponseUsage). README.md has the mapping tables.
namespace sluice::protocol::openai_responses {

// The wire format of POST /v1/responses bodies and their event streams.
inline constexpr ProtocolId kResponsesProtocol = "openai_responses";

// Maximum JSON nesting accepted from callers and upstreams.
inline constexpr std::size_t kMaxJsonDepth = 64;

// ResponseUsage <-> IR. Both count the same way: input_tokens includes the cached tokens
// (input_tokens_details.cached_tokens) and output_tokens includes the reasoning tokens
// (output_tokens_details.reasoning_tokens), so the figures map one to one:
//   input_tokens -> input, cached_tokens -> cache_read, cache_write_tokens -> cache_write,
//   output_tokens -> output, reasoning_tokens -> reasoning.
// Appends {"input_tokens","input_tokens_details":{"cached_tokens","cache_write_tokens"},
// "output_tokens","output_tokens_details":{"reasoning_tokens"},"total_tokens"}; total saturates.
void append_usage_json(std::string& out, const ir::Usage& usage);
// Reads a `usage` object. kUpstreamProtocol for counts that are not non-negative integers.
Result<ir::Usage> read_usage(const boost::json::value& usage);

// The fields of a Response and its stream events the answer decoders know per level, read or
// skipped on purpose (the request echo: instructions, tools, temperature, ...); anything else
// is schema drift (protocol/drift.h).
namespace known {

inline constexpr std::string_view kResponse[] = {
    "id",
    "object",
    "created_at",
    "completed_at",
    "status",
    "error",
    "incomplete_details",
    "instructions",
    "max_output_tokens",
    "max_tool_calls",
    "model",
    "output",
    "output_text",
    "parallel_tool_calls",
    "previous_response_id",
    "reasoning",
    "service_tier",
    "store",
    "temperature",
    "text",
    "tool_choice",
    "tools",
    "top_p",
    "top_logprobs",
    "truncation",
    "usage",
    "user",
    "metadata",
    "background",
    "billing",
    "prompt",
    "prompt_cache_key",
    "prompt_cache_retention",
    "safety_identifier",
    "frequency_penalty",
    "presence_penalty",
    "conversation",
};
// An output item of a type the decoders translate (message, function_call, reasoning).
inline constexpr std::string_view kItem[] = {
    "id",      "type", "status",    "role",    "content",
    "call_id", "name", "arguments", "summary", "encrypted_content",
};
// A message content part or a reasoning summary part: annotations and logprobs are not carried.
inline constexpr std::string_view kPart[] = {"type", "text", "refusal", "annotations", "logprobs"};
inline constexpr std::string_view kUsage[] = {
    "input_tokens",          "input_tokens_details", "output_tokens",
    "output_tokens_details", "total_tokens",
};
// A stream event's own object (any event type).
inline constexpr std::string_view kEvent[] = {
    "type",         "sequence_number", "response",      "item",    "item_id",
    "output_index", "content_index",   "summary_index", "part",    "delta",
    "text",         "arguments",       "name",          "refusal", "logprobs",
    "obfuscation",  "error",           "code",          "message", "param",
};

}  // namespace known

// The string at `key`, or nullopt when absent, null or not a string (views into `o`;
// protocol/wire_json.h).
using protocol::wire::string_at;

// Reasoning items <-> IR parts, one rule for requests, answers and streams:
//   summary_text entries -> one kReasoning each (id = the item id), the item's
//   encrypted_content the signature of the last one; an item without summary entries -> one
//   kRedactedReasoning (signature = encrypted_content) when it has encrypted_content, else one
//   kReasoning with empty text (so the item survives a round trip).
// read_reasoning_item fails (false) when the summary is not an array of {text} objects or
// encrypted_content is not a string.
bool read_reasoning_item(const boost::json::object& item, std::string_view id,
                         std::vector<ir::ContentPart>& out);
// The index one past the run of reasoning parts that starts at parts[begin]: consecutive
// kReasoning / kRedactedReasoning parts with the same non-empty id (a part without id is a run
// of its own).
std::size_t reasoning_run_end(const std::vector<ir::ContentPart>& parts, std::size_t begin);
// {"type":"reasoning","id":..,"summary":[{"type":"summary_text","text":..}..],
// "encrypted_content":..} for parts[begin, end): a summary_text per kReasoning part except a
// lone empty one; encrypted_content = the last signature, left out when there is none. Parts
// whose id differs from parts[begin]'s are left out.
void write_reasoning_item(codec::JsonWriter& w, std::string_view id,
                          const std::vector<ir::ContentPart>& parts, std::size_t begin,
                          std::size_t end);

// "resp_" + id unless it already starts with "resp_" (answers translated from other protocols).
std::string response_id(std::string_view id);

// How a response ended, from its status and incomplete_details.reason:
//   completed -> kToolCalls when it holds function calls, else kStop;
//   incomplete + max_output_tokens -> kLength; + content_filter -> kContentFilter; else kOther.
ir::FinishReason finish_from_status(std::string_view status, std::string_view incomplete_reason,
                                    bool has_tool_calls);
// The inverse: "" for a completed response, else the incomplete_details.reason
// (kLength -> max_output_tokens, kContentFilter -> content_filter).
std::string_view incomplete_reason(ir::FinishReason finish);

}  // namespace sluice::protocol::openai_responses
