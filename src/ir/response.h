#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ir/request.h"
#include "ir/usage.h"

namespace sluice::ir {

// Why the model stopped, in one vocabulary. Codecs map to and from theirs:
//   OpenAI finish_reason: stop, length, tool_calls, content_filter (function_call -> kToolCalls)
//   Anthropic stop_reason: end_turn, max_tokens, tool_use, stop_sequence, pause_turn, refusal
enum class FinishReason : std::uint8_t {
  kUnset,
  kStop,          // natural end of turn
  kLength,        // max tokens reached
  kToolCalls,     // the model asks for tool results
  kStopSequence,  // a caller-given stop sequence matched (`stop_sequence` says which)
  kContentFilter,
  kPauseTurn,
  kRefusal,
  kOther,
};

std::string_view to_string(FinishReason reason);

// A complete (non-streaming) answer: one candidate.
struct Response {
  std::string id;
  std::string model;
  std::vector<ContentPart> content;  // kText, kReasoning, kRedactedReasoning, kToolCall, in order
  FinishReason finish = FinishReason::kUnset;
  std::string stop_sequence;
  std::optional<Usage> usage;
  std::int64_t created = 0;  // unix seconds, when the provider says
  // An embeddings call's answer: one vector per Embed::inputs entry, in order (content empty).
  // Doubles: the upstream's numbers (float32 values printed in decimal) survive unchanged.
  std::vector<std::vector<double>> embeddings;
  // Schema drift: distinct fields of the upstream's answer its decoder does not know (at the
  // levels it reads: answer, message / choice / candidate, content block / part, usage).
  std::uint32_t unknown_fields = 0;
};

}  // namespace sluice::ir
