#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "codec/json_scan.h"
#include "core/error.h"
#include "ir/stream_event.h"
#include "ir/usage.h"
#include "protocol/stream.h"

namespace sluice::protocol::gemini {

// Turns IR stream events into a streamGenerateContent?alt=sse stream for a Gemini caller: each
// chunk a whole GenerateContentResponse framed as the API frames it, `data: <json>\r\n\r\n`,
//   {"candidates":[{"content":{"parts":[..],"role":"model"}[,"finishReason"],"index":0}]
//    [,"usageMetadata":{..}],"modelVersion":..[,"responseId":..]}
// and no terminator. One instance per request; not thread-safe.
//   kStart                  nothing (id and model are remembered for every chunk)
//   kTextDelta              a chunk with {"text"} at once (no added latency)
//   kReasoningDelta         a chunk with {"text","thought":true}
//   kReasoningSignature     held, and written as the thoughtSignature of the next text or
//                           functionCall part; when thinking or the end comes first, as its own
//                           {"text":"","thought":true,"thoughtSignature"} part
//   kToolCallStart / Delta  arguments collected; the call goes out as one whole
//                           {"functionCall":{"name","args","id"}} part as soon as its
//                           arguments form a complete JSON value (Gemini has no argument
//                           deltas), in the order the calls started; kFinish / kDone flush
//                           the rest
//   kRedactedReasoning      dropped and counted in dropped_events() (Gemini has no opaque
//                           reasoning to give back)
//   kUsage                  remembered; from then on every chunk carries usageMetadata
//                           (conventions.h to_wire_usage; cumulative, as the API's)
//   kFinish                 remembered (usage may still follow: OpenAI sends it last)
//   kDone                   the final chunk: what is still held, finishReason
//                           (finish_reason_name) and usageMetadata (zeros without usage)
//   kError                  a `data: {"error":{"code","message","status"}}` event: the
//                           Gen AI SDK raises an ApiError for it (it checks every data
//                           event for an error object)
// A conversion that cannot be done (arguments that are not a JSON object, a delta for a call
// never started) ends the stream with that error too; error() then holds it.
class StreamEncoder final : public protocol::StreamEncoder {
 public:
  StreamEncoder() = default;

  void encode(const ir::StreamEvent& event, std::string& out) override;
  bool finished() const override { return finished_; }
  const std::optional<Error>& error() const override { return error_; }
  std::uint32_t usage_clamped() const override { return usage_clamped_; }
  // Redacted reasoning left out.
  std::uint32_t dropped_events() const override { return dropped_events_; }

 private:
  struct ToolCall {
    std::uint32_t index = 0;
    std::string id;
    std::string name;
    std::string arguments;
    codec::JsonScan scan;
    bool written = false;
  };

  // Starts a chunk: `{"candidates":[{"content":{"parts":[`.
  void open_chunk(std::string& out);
  // Ends a chunk after its parts, with `finish` when given.
  void close_chunk(std::string& out, std::string_view finish);
  void text_part(std::string& out, std::string_view text, bool thought);
  bool signature_part(std::string& out);
  bool flush_calls(std::string& out, bool all, bool& any);
  ToolCall* find(std::uint32_t index);
  void fail(const Error& error, std::string& out);

  std::string id_;
  std::string model_;
  std::string signature_;  // held for the next part
  std::vector<ToolCall> calls_;
  ir::FinishReason finish_ = ir::FinishReason::kUnset;
  std::optional<ir::Usage> usage_;
  std::size_t parts_in_chunk_ = 0;
  bool finished_ = false;
  std::optional<Error> error_;
  std::uint32_t usage_clamped_ = 0;
  std::uint32_t dropped_events_ = 0;
};

// The terminal error of a Gemini stream: `data: {"error":{...}}\r\n\r\n`. The API has also been
// seen writing the object bare (no `data:`), which the JS SDK catches only when it arrives in a
// read of its own; a data event it raises whatever the reads (StreamDecoder reads both).
void append_stream_error(const Error& error, std::string& out);

}  // namespace sluice::protocol::gemini
