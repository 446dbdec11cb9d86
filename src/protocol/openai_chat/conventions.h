#pragma once

#include <string>
#include <string_view>

#include "ir/response.h"
#include "ir/usage.h"
#include "protocol/protocol_id.h"

// What the OpenAI Chat Completions codecs share: the protocol ids, finish reasons both ways, the
// usage object and completion ids. Pure functions.
namespace sluice::protocol::openai_chat {

// Wire format ids of this folder's protocols.
inline constexpr ProtocolId kChatProtocol = "openai_chat";
inline constexpr ProtocolId kEmbeddingsProtocol = "openai_embeddings";

// stop -> kStop, length -> kLength, tool_calls and function_call -> kToolCalls,
// content_filter -> kContentFilter, anything else -> kOther.
ir::FinishReason finish_reason_from_openai(std::string_view reason);

// ir::FinishReason -> finish_reason: kStop and kStopSequence -> "stop" (Chat Completions has
// no field naming the sequence), kLength -> "length", kToolCalls -> "tool_calls",
// kContentFilter and kRefusal -> "content_filter" (the reason OpenAI gives when its own
// policy cut the answer), kPauseTurn, kOther and kUnset -> "stop": OpenAI has no "unknown"
// reason and clients treat "stop" as the neutral end of an answer.
std::string_view finish_reason_to_openai(ir::FinishReason finish);

// Appends OpenAI's usage object:
//   {"prompt_tokens","completion_tokens","total_tokens",
//    "prompt_tokens_details":{"cached_tokens"},"completion_tokens_details":{"reasoning_tokens"}}
// prompt_tokens = IR input (both count cache reads and writes), cached_tokens = cache reads;
// cache writes have no field (they stay inside prompt_tokens). total_tokens saturates instead
// of wrapping.
void append_usage_json(std::string& out, const ir::Usage& usage);

// "chatcmpl-" + id, unless id already starts with it (shared with stream_encoder.h).
std::string completion_id(std::string_view id);

}  // namespace sluice::protocol::openai_chat
