#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/result.h"
#include "ir/request.h"

// IR -> OpenAI Responses request body (POST /v1/responses), for a Responses upstream of a caller
// speaking another protocol. Sans-I/O, stateless, thread-safe. README.md has the tables; the
// inverse is request_decoder.h.
namespace sluice::protocol::openai_responses {

struct EncodeStats {
  // Reasoning parts left out: only parts carrying a Responses reasoning item id (set by
  // decode_request / decode_response) can be sent back to a Responses upstream.
  std::uint32_t dropped_reasoning = 0;
  // IR fields Responses has no parameter for: stop sequences, top_k, reasoning budget.
  std::uint32_t dropped_fields = 0;
};

// IR -> a Responses request body with `model` = upstream_model, the inverse of decode_request:
//   system: one part -> instructions, several -> a leading system message of input_text parts;
//   user: its tool results first as function_call_output items (output: the text joined, or
//   input_text / input_image parts when the result holds an image), then {role:user, content};
//   assistant: parts in order: reasoning items (consecutive reasoning parts with one id),
//   {role:assistant, content: text} per text part, function_call items;
//   tools with "strict":false (Responses defaults function tools to strict mode, which other
//   protocols' schemas do not expect); "store":false (the gateway keeps no record of translated
//   answers); "stream":true when `stream`; response_format -> text {format: {type:json_object}
//   or {type:json_schema, name ("response" when the caller's protocol has none), description,
//   schema, strict (only when given)}}.
// Errors (kBadRequest): max_tokens below 16 (the API's minimum for max_output_tokens).
Result<std::string> encode_request(const ir::Request& request, std::string_view upstream_model,
                                   bool stream, EncodeStats* stats = nullptr);

}  // namespace sluice::protocol::openai_responses
