#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/result.h"
#include "ir/response.h"
#include "ir/usage.h"
#include "protocol/protocol_id.h"

// Conventions of the Gemini API (generativelanguage.googleapis.com, v1beta) shared by the
// request, response and stream codecs: usage accounting, finish reasons, function-call ids.
// Pure functions; no state. Field semantics are those of the API reference
// (GenerateContentResponse.UsageMetadata, Candidate.FinishReason, FunctionCall).
namespace sluice::protocol::gemini {

// The wire format of generateContent / streamGenerateContent bodies and their event streams.
inline constexpr ProtocolId kGeminiProtocol = "gemini";

// Maximum JSON nesting accepted from callers and upstreams.
inline constexpr unsigned kMaxJsonDepth = 64;

// `usageMetadata`. Unlike the IR, Gemini reports thinking OUTSIDE the candidates:
// totalTokenCount = promptTokenCount + candidatesTokenCount + toolUsePromptTokenCount +
// thoughtsTokenCount, and promptTokenCount INCLUDES cachedContentTokenCount.
struct WireUsage {
  std::uint64_t prompt = 0;           // promptTokenCount
  std::uint64_t cached_content = 0;   // cachedContentTokenCount (part of prompt)
  std::uint64_t candidates = 0;       // candidatesTokenCount (thoughts not included)
  std::uint64_t thoughts = 0;         // thoughtsTokenCount
  std::uint64_t tool_use_prompt = 0;  // toolUsePromptTokenCount (not part of prompt)
  std::uint64_t total = 0;            // totalTokenCount
};

// Gemini -> IR:
//   input      = promptTokenCount + toolUsePromptTokenCount (tool results fed back to the model
//                are prompt the caller pays for as input)
//   cache_read = cachedContentTokenCount (already inside promptTokenCount)
//   output     = candidatesTokenCount + thoughtsTokenCount
//   reasoning  = thoughtsTokenCount
//   cache_write stays 0 (Gemini reports cache creation on cachedContents.create, not here).
// totalTokenCount is not read (it is the sum above). kUpstreamProtocol on overflow.
Result<ir::Usage> from_wire_usage(const WireUsage& usage);

// IR -> Gemini, the inverse: promptTokenCount = input (a tool-use share cannot be told apart
// and stays in the prompt), cachedContentTokenCount = cache_read, thoughtsTokenCount =
// reasoning, candidatesTokenCount = output - reasoning, totalTokenCount = input + output.
// Figures that cannot be expressed (reasoning above output, cache reads above input) are
// clamped (candidates 0 and thoughts = output; cached = input) and `clamped` is set: the
// answer is paid for and still reaches the caller, metering keeps the IR figures.
WireUsage to_wire_usage(const ir::Usage& usage, bool& clamped);

// Appends {"promptTokenCount":..,"candidatesTokenCount":..,"totalTokenCount":..
// [,"cachedContentTokenCount":..][,"thoughtsTokenCount":..]} (the optional counts only when
// non-zero, as the API omits them).
void append_usage_json(std::string& out, const WireUsage& usage);

// Candidate.finishReason -> FinishReason. STOP is kToolCalls when the candidate called a
// function (Gemini says STOP for function calls; other protocols' agent loops wait for
// tool_calls / tool_use), kStop otherwise. MAX_TOKENS -> kLength. SAFETY, RECITATION,
// BLOCKLIST, PROHIBITED_CONTENT, SPII, IMAGE_SAFETY, IMAGE_PROHIBITED_CONTENT,
// IMAGE_RECITATION -> kContentFilter. Everything else, known (LANGUAGE, OTHER,
// MALFORMED_FUNCTION_CALL, UNEXPECTED_TOOL_CALL, TOO_MANY_TOOL_CALLS, NO_IMAGE, IMAGE_OTHER,
// FINISH_REASON_UNSPECIFIED) or not, -> kOther: never an invented clean finish. "" -> kUnset.
ir::FinishReason finish_reason(std::string_view reason, bool called_functions);

// promptFeedback.blockReason (the prompt itself was blocked, no candidate): SAFETY,
// BLOCKLIST, PROHIBITED_CONTENT, IMAGE_SAFETY -> kContentFilter; anything else -> kOther.
ir::FinishReason block_reason(std::string_view reason);

// FinishReason -> finishReason: kStop, kToolCalls, kStopSequence -> STOP; kLength ->
// MAX_TOKENS; kContentFilter, kRefusal -> SAFETY; kPauseTurn, kOther, kUnset -> OTHER.
std::string_view finish_reason_name(ir::FinishReason finish);

// Function-call ids. Gemini matches a functionResponse to its functionCall by name (and
// order); the API may also send FunctionCall.id, which is kept when present. Without one the
// IR id is made from the call's position, deterministically:
//   in an answer (response or stream): "call_<responseId>_<k>" (k = 0-based count of the
//   calls in the candidate; "call_<k>" without a responseId), unique across the turns of a
//   conversation because responseIds are;
//   in a request: "call_<content index>_<part index>".
std::string answer_call_id(std::string_view response_id, std::size_t index);
std::string request_call_id(std::size_t content, std::size_t part);

}  // namespace sluice::protocol::gemini
