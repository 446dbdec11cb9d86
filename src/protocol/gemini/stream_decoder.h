#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json/object.hpp>

#include "codec/sse.h"
#include "ir/stream_event.h"
#include "ir/usage.h"
#include "protocol/drift.h"
#include "protocol/stream.h"

namespace sluice::protocol::gemini {

// Translates a streamGenerateContent?alt=sse stream into IR stream events (ordering contract of
// ir/stream_event.h). Each SSE event (`data: {json}\r\n\r\n`, no event names, no terminator) is
// a whole GenerateContentResponse for what is new since the last one:
//   first chunk            -> kStart {id = responseId, model = modelVersion}
//   candidates[0].content.parts, in order:
//     text                 -> kTextDelta (empty text skipped)
//     thought:true text    -> kReasoningDelta
//     thoughtSignature     -> kReasoningSignature: after the text of a thought part, before
//                             the content of any other part (it signs the thinking before it)
//     functionCall         -> kToolCallStart {index: calls so far, id: FunctionCall.id or
//                             answer_call_id(responseId, index), name}, then one kToolCallDelta
//                             with the whole args object ("{}" when absent): Gemini sends each
//                             call whole
//   usageMetadata          -> kUsage when it differs from the last one (it is cumulative in
//                             every chunk; conventions.h from_wire_usage), before the chunk's
//                             content, so input usage is known before the first delta
//   finishReason           -> kFinish (conventions.h finish_reason; STOP after a function call
//                             -> kToolCalls), once
//   promptFeedback.blockReason without a candidate -> kFinish per block_reason
//   {"error":{...}}        -> kError (errors.h error_from_wire), whether it comes as a `data:`
//                             event or as the bare JSON object the API writes into the stream
// End of the body: after a finishReason -> kDone; before one -> kError (kUpstreamProtocol,
// "upstream stream ended before a finishReason"). Anything the IR cannot express (a part other
// than text, thought or functionCall; Vertex AI's partialArgs / willContinue; more than one
// candidate; content after the finishReason; invalid JSON) becomes one kError that ends the
// stream, never a silent drop. Nothing after kDone or kError.
//
// Each chunk is read in one pass of a reused SAX parser that keeps only the fields above (no
// DOM, no allocation per chunk once its buffers have grown): the shape every text and thought
// chunk has. A chunk outside it (an error object, a functionCall or other non-text part, a
// snake_case or repeated field the decoder reads, a mistyped value, no candidate, content after
// the finishReason, invalid JSON) is read again into a Boost.JSON DOM, which decides everything
// exactly as above; the fast pass changes no state before it knows it can take the chunk.
class StreamDecoder final : public protocol::StreamDecoder {
 public:
  StreamDecoder();
  ~StreamDecoder() override;
  StreamDecoder(const StreamDecoder&) = delete;
  StreamDecoder& operator=(const StreamDecoder&) = delete;

  void on_event(const codec::SseEvent& event, std::vector<ir::StreamEvent>& out) override;
  void on_end(std::vector<ir::StreamEvent>& out) override;
  bool finished() const override { return finished_; }

  // A finishReason (or blockReason) has been seen.
  bool answered() const { return answered_; }
  // The cumulative usage so far in IR terms.
  const std::optional<ir::Usage>& usage() const { return usage_; }
  // Schema drift: distinct unknown fields of the chunks, candidate, content, parts and
  // usageMetadata over the stream (wire_json.h known::).
  std::uint32_t unknown_fields() const override { return drift_.count(); }

 private:
  class FastParser;
  struct Dom;

  // The SAX pass; false when the chunk needs the DOM (nothing emitted, no state changed).
  bool fast_chunk(std::string_view text, std::vector<ir::StreamEvent>& out);
  void dom_chunk(std::string_view text, std::vector<ir::StreamEvent>& out);
  // What both passes emit, in the order of the class comment.
  void start(std::string_view id, std::string_view model, std::vector<ir::StreamEvent>& out);
  void usage(const ir::Usage& usage, std::vector<ir::StreamEvent>& out);
  void finish(ir::FinishReason finish, std::vector<ir::StreamEvent>& out);
  void chunk(const boost::json::object& o, std::vector<ir::StreamEvent>& out);
  bool candidate(const boost::json::object& c, std::vector<ir::StreamEvent>& out);
  bool part(const boost::json::value& v, std::vector<ir::StreamEvent>& out);
  void fail(Error error, std::vector<ir::StreamEvent>& out);
  void fail(std::string message, std::vector<ir::StreamEvent>& out);

  std::string response_id_;
  std::optional<ir::Usage> usage_;
  Drift drift_;
  std::uint32_t calls_ = 0;
  bool started_ = false;
  bool answered_ = false;
  bool finished_ = false;
  std::unique_ptr<FastParser> fast_;
  std::unique_ptr<Dom> dom_;  // made on the first chunk that needs it
};

// The JSON text of an SSE block from a Gemini stream: its data, or, for a block without data
// lines whose text is a JSON object (how the API writes an error into a stream), the block
// itself; "" for anything else (comments, blank blocks).
std::string_view chunk_text(const codec::SseEvent& event);

}  // namespace sluice::protocol::gemini
