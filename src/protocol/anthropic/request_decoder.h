#pragma once

#include <cstdint>
#include <string_view>

#include "core/result.h"
#include "ir/request.h"

namespace sluice::protocol::anthropic {

struct DecodeOptions {
  // Reject top-level fields this decoder does not know, and output_config members other than
  // effort and format ("<field>: Extra inputs are not permitted", what the Anthropic API itself
  // answers). Off by default: the gateway tolerates fields newer clients send
  // (context_management, service_tier, ...) and counts them instead; config
  // server.strict_fields turns it on for translated requests.
  bool strict = false;
  // A POST /v1/messages/count_tokens body: the Messages fields, but max_tokens is optional (the
  // counting endpoint takes none).
  bool count_tokens = false;
};

struct DecodeStats {
  // Top-level fields that were ignored because the IR cannot carry them (schema drift metric).
  std::uint32_t ignored_fields = 0;
};

// Decodes and validates a POST /v1/messages body into the IR. Never throws; `body` is only read
// during the call (the IR owns copies).
//
// Accepted: model (non-empty string), max_tokens (integer >= 1), messages (non-empty array of
// {role: user|assistant, content: string | array of blocks}), system (string | array of text
// blocks), tools (custom tools: name, description, input_schema object, cache_control),
// tool_choice {type: auto|any|tool|none, name, disable_parallel_tool_use}, temperature and top_p
// (numbers in [0, 1]), top_k (integer >= 0), stop_sequences (strings), stream (boolean),
// metadata.user_id (-> user), thinking {type: enabled, budget_tokens >= 1024} | {type: disabled}
// | {type: adaptive} (-> enabled without a budget), output_config {effort -> reasoning.effort,
// format {type: json_schema, schema} -> response_format kJsonSchema} and the structured-outputs
// beta's top-level output_format (the same shape; both at once is an error).
// Content blocks: text, image (source base64 {media_type, data} | url {url}), tool_use {id, name,
// input object -> compact JSON text in `arguments`}, tool_result {tool_use_id, content string |
// array of text / image blocks, is_error}, thinking {thinking, signature}, redacted_thinking
// {data}. cache_control {type: ephemeral, ttl} on a block -> cache_breakpoint / cache_ttl.
// Tool results stay in the user message they came in (Role::kUser, PartKind::kToolResult).
//
// Errors are ErrorKind::kBadRequest (HTTP 400) with a message in the API's own shape,
// "<field path>: <problem>" (e.g. "max_tokens: Field required", "messages.0.content.1.type:
// Input tag 'x' found using 'type' does not match any of the expected tags: ..."), and
// param() = the field path. Invalid JSON, a non-object body and nesting deeper than 64 levels
// are rejected with an empty param. Content the IR cannot carry (document blocks, server tools,
// image file sources) is rejected rather than dropped.
Result<ir::Request> decode_request(std::string_view body, const DecodeOptions& options = {},
                                   DecodeStats* stats = nullptr);

}  // namespace sluice::protocol::anthropic
