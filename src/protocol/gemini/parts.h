#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json/value.hpp>

#include "core/function_ref.h"
#include "core/result.h"
#include "ir/request.h"

// Gemini `Part`s <-> IR content parts, shared by the request and response codecs (the stream
// codecs follow the same rules event by event). Internal to this folder; README.md states the
// rules.
namespace sluice::protocol::gemini::parts {

// Where parts come from: a caller's request (errors are kBadRequest, worded like the API's own
// "* GenerateContentRequest.<field>: <problem>", param() = the field) or an upstream's answer
// (kUpstreamProtocol; only text, thought and functionCall parts can be translated).
enum class Source : std::uint8_t { kCaller, kUpstream };

// How function calls and responses get their IR ids (conventions.h).
class CallIds {
 public:
  virtual ~CallIds() = default;
  // The IR id of the functionCall at position `part` of the content, named `name`; `given` is
  // its FunctionCall.id ("" when absent).
  virtual std::string call_id(std::string_view given, std::size_t part, std::string_view name) = 0;
  // The IR id of the call a functionResponse named `name` answers (`given`: its id, "" when
  // absent). Only requests carry responses.
  virtual Result<std::string> response_id(std::string_view given, std::string_view name,
                                          const std::string& path) = 0;
};

// Appends the IR parts of one Content's `parts` array (at `path`, e.g. "contents[2].parts") to
// `out`:
//   text -> kText (empty text is skipped); thought:true text -> kReasoning, consecutive thought
//   parts merged into one (their text concatenated), as one Anthropic thinking block;
//   thoughtSignature -> the signature of the reasoning it follows: it closes the open (unsigned)
//   reasoning part, or, when there is none (a signature on a first functionCall), becomes a
//   kReasoning part with empty text and that signature placed before the part;
//   functionCall {name, args, id} -> kToolCall (arguments = compact JSON of args, "{}" when
//   absent; id from `ids`); partialArgs / willContinue (Vertex AI's streamed arguments) fail;
//   callers only: functionResponse {name, response, id, parts} -> kToolResult (id from `ids`;
//   content: the string when response is {"output": string} or {"error": string}, else the
//   compact JSON of response; is_error when response has "error" and no "output"; inlineData
//   images of its `parts` follow); inlineData {mimeType image/*, data} -> kImage (base64);
//   fileData {fileUri, mimeType image/*} -> kImage (URL, media_type kept).
// Other parts (executableCode, codeExecutionResult, toolCall, toolResponse, non-image media)
// fail: the IR cannot carry them.
Result<void> read_parts(const boost::json::value& parts, Source source, const std::string& path,
                        CallIds& ids, std::vector<ir::ContentPart>& out);

// What write_parts left out because Gemini cannot take it (metrics).
struct WriteStats {
  std::uint32_t dropped_empty = 0;     // empty text parts (the API rejects them)
  std::uint32_t dropped_redacted = 0;  // kRedactedReasoning: Gemini has no opaque reasoning
};

struct WriteOptions {
  // The error kind for content that cannot be written: kBadRequest when the IR came from a
  // caller (request encoding), kUpstreamProtocol when it came from an upstream (answers).
  ErrorKind error_kind = ErrorKind::kUpstreamProtocol;
  // Write FunctionCall.id (answers to Gemini callers; the API itself rejects ids in requests).
  bool call_ids = false;
  // Requests only (null otherwise, then tool results and images are errors): the name of the
  // function whose call has IR id `id`, "" when none (Gemini pairs responses by name).
  const FunctionRef<std::string_view(std::string_view id)>* result_name = nullptr;
};

// Appends the IR parts of one message as a JSON array of Gemini parts:
//   kText -> {"text"}; kReasoning -> {"text","thought":true}; its signature goes on the next
//   part when that is a (non-empty) text or a functionCall part (where Gemini puts it),
//   otherwise on the thought part itself; kToolCall -> {"functionCall":{"name","args"[,"id"]}}
//   (arguments must be a JSON object, "" counts as {}); kToolResult -> {"functionResponse":
//   {"name","response"[,"parts"]}} (response: the content text when it is a JSON object,
//   else {"output": text}, or {"error": text} when is_error; base64 images in "parts");
//   kImage -> {"inlineData":{"mimeType","data"}} or {"fileData":{"mimeType","fileUri"}} (the
//   MIME type guessed from the URL's extension when unknown, image/jpeg by default).
// Dropped and counted: empty text, redacted reasoning. `written` = the number of parts.
Result<void> write_parts(std::string& out, std::span<const ir::ContentPart> content,
                         const WriteOptions& options, WriteStats& stats, std::size_t& written);

}  // namespace sluice::protocol::gemini::parts
