#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "core/result.h"
#include "event_source.h"
#include "reply.h"
#include "reply_content.h"

namespace sluice::mock {

// What the mock takes from a Gemini generateContent / streamGenerateContent body.
struct GeminiRequest {
  // Set when the reply is a functionCall part: some "tools" entry has functionDeclarations
  // and toolConfig.functionCallingConfig.mode is not "NONE". The first allowedFunctionNames
  // entry in mode "ANY", otherwise the first declared function.
  std::optional<std::string> function_name;
  // Characters of all parts' text in systemInstruction and contents / 4 + 1.
  std::uint32_t prompt_tokens = 0;
};

// How streamGenerateContent frames its chunks.
enum class GeminiFraming : std::uint8_t {
  kSse,        // ?alt=sse: `data: <json>\r\n\r\n` per chunk, no terminator
  kJsonArray,  // otherwise: one pretty-printed JSON array, `[`, `\n,\r\n` between chunks, `\n]`
};

// Validates a body as the API does: a JSON object whose "contents" is a non-empty array.
// Errors are kBadRequest with Google's messages.
Result<GeminiRequest> parse_gemini_request(std::string_view body);

// A GenerateContentResponse, pretty-printed as Google sends it: one candidate with the text
// "Mock reply w1 .. wN" (or one functionCall part with args {"mock":true}), finishReason
// STOP, index 0; usageMetadata with prompt, candidates and total token counts;
// modelVersion `model`; responseId gemini-mock-<n>.
std::string gemini_response_body(const GeminiRequest& request, std::string_view model,
                                 const ReplySpec& spec);

// The chunks of a streamed reply (all kCounted): one per word, or one functionCall chunk.
// Each is a whole GenerateContentResponse with the cumulative usageMetadata; the last one
// carries finishReason STOP. kJsonArray ends with "\n]" (kTrailer; left out with
// spec.omit_done).
std::unique_ptr<EventSource> make_gemini_stream(const GeminiRequest& request,
                                                std::string_view model, const ReplySpec& spec,
                                                GeminiFraming framing);

// POST …/models/{model}:generateContent (framing nullopt) or :streamGenerateContent.
Result<Reply> respond_gemini(std::string_view body, std::string_view model, const ReplySpec& spec,
                             std::optional<GeminiFraming> framing);

}  // namespace sluice::mock
