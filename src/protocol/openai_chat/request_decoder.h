#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/result.h"
#include "ir/request.h"

// OpenAI Chat Completions request body -> IR, for an OpenAI caller translated to an upstream of
// another protocol (the passthrough path uses envelope.h instead). The inverse of
// request_encoder.h. Sans-I/O, stateless, thread-safe.
namespace sluice::protocol::openai_chat {

struct DecodeOptions {
  // Reject (400, code unsupported_parameter, param = the field) any field decode_request would
  // otherwise ignore and count: config `server.strict_fields`.
  bool strict = false;
};

struct DecodeStats {
  // Top-level fields that were ignored because the IR cannot carry them (schema drift metric).
  std::uint32_t ignored_fields = 0;
};

// The inverse of encode_request, for an OpenAI Chat Completions body. Leading system and
// developer messages become request.system; later ones become Role::kSystem messages.
// Each run of consecutive tool messages becomes one Role::kUser message of kToolResult
// parts, and a user message directly after it is merged into that message (the shape
// Anthropic needs, and what encode_request takes apart). reasoning_effort sets
// reasoning.enabled and reasoning.effort; max_completion_tokens wins over max_tokens; user,
// else safety_identifier, -> user. response_format {type: text | json_object | json_schema,
// json_schema: {name (required), description, schema, strict}} -> response_format (a
// json_schema without a schema is json_object: any JSON).
// Refused (kBadRequest, code unsupported_parameter), because no other provider can honour
// them: n above 1, logprobs true, top_logprobs above 0.
// Ignored and counted in stats->ignored_fields (rejected when options.strict): every other
// top-level field (seed, penalties, logit_bias, metadata, store true, service_tier,
// prediction, modalities, audio, functions, unknown fields) except those whose value asks for
// nothing (null, n 1, logprobs false, penalties 0, store false, service_tier "auto");
// stream_options is read by the ingress. An assistant refusal is dropped.
// Errors (kBadRequest, with param): invalid JSON (depth > 64 included), a body that is not
// an object, missing model or messages, unknown roles, content parts other than text and
// image_url (audio and files are not in the IR), malformed tool calls, a malformed
// response_format (worded like OpenAI: "Missing required parameter: '...'.").
Result<ir::Request> decode_request(std::string_view body, DecodeStats* stats = nullptr,
                                   const DecodeOptions& options = {});

}  // namespace sluice::protocol::openai_chat
