#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json/object.hpp>

#include "codec/sse.h"
#include "ir/stream_event.h"
#include "protocol/bedrock_converse/conventions.h"
#include "protocol/json_stream_decoder.h"

namespace sluice::protocol::bedrock_converse {

// Translates a ConverseStream answer into IR stream events, keeping the ordering contract of
// ir/stream_event.h. The body is an application/vnd.amazon.eventstream of binary messages; the
// relay (codec/upstream_events.h) turns each into a codec::SseEvent whose `event` is the message's
// `:event-type` header and whose `data` is its JSON payload (the event object itself, no {"<type>":
// ...} wrapper; every payload carries a random-length "p" padding field, ignored). For a message
// whose `:message-type` is exception, `event` is its `:exception-type` header and `data` its
// {"message"} payload. One instance per upstream response; not thread-safe; not copyable or movable
// (it owns a parse arena).
//
//   messageStart        -> kStart (id and model empty: ConverseStream carries neither)
//   contentBlockStart   -> start.toolUse {toolUseId, name} -> kToolCallStart {index, id, name},
//                          index counting tool blocks from 0 (not contentBlockIndex); other
//                          start members (toolResult, image) -> kError
//   contentBlockDelta   -> delta.text -> kTextDelta; delta.reasoningContent.text ->
//                          kReasoningDelta, .signature -> kReasoningSignature,
//                          .redactedContent -> kRedactedReasoning; delta.toolUse.input (a
//                          fragment of the arguments JSON text) -> kToolCallDelta. Empty
//                          fragments are skipped. Text and reasoning blocks have no
//                          contentBlockStart (recorded streams): their first delta opens them.
//                          Other deltas (citation, image, toolResult) -> kError.
//   contentBlockStop    -> nothing
//   messageStop         -> stopReason (conventions.h finish_reason) and the stop sequence in
//                          additionalModelResponseFields (wire_json.h stop_sequence) are held:
//                          the IR puts kUsage before kFinish, and ConverseStream sends its
//                          usage in `metadata`, after messageStop.
//   metadata            -> kUsage (input = inputTokens + cacheRead + cacheWrite); then, when
//                          messageStop came, kFinish {finish, text = stop sequence when
//                          kStopSequence} and kDone. A metadata before messageStop (the service
//                          model does not fix the order) gives kUsage now; messageStop then
//                          ends the stream with kFinish, kDone.
//   *Exception          -> kError (errors.h stream_exception: throttlingException 429,
//                          serviceUnavailableException 503, internalServerException 500 and
//                          modelStreamErrorException 502 retryable; validationException 400 not)
//   error               -> kError (errors.h stream_error): a `:message-type` error message,
//                          its :error-code in SseEvent::id and :error-message in data, as
//                          codec/upstream_events.h hands it over (on_event only)
//   other event types   -> nothing; counted as schema drift (unknown_fields())
// Anything else the IR cannot express — invalid JSON, events before messageStart, content
// after messageStop, a delta of another kind than its block's, a second messageStart or
// messageStop — becomes one kError (kUpstreamProtocol, "cannot translate ...") that ends the
// stream: never dropped. After kDone or kError further input is ignored. finished() and
// unknown_fields() (distinct unknown event types, skipped, and unknown fields of the event
// payloads, deltas and usage: wire_json.h known::) come from JsonStreamDecoder.
class StreamDecoder final : public protocol::JsonStreamDecoder {
 public:
  void on_event(const codec::SseEvent& event, std::vector<ir::StreamEvent>& out) override;
  void decode(std::string_view event_type, std::string_view data,
              std::vector<ir::StreamEvent>& out);

  // End of the upstream body. After messageStop the answer is complete even without metadata:
  // kFinish and kDone (no kUsage: none came). Earlier: kError (kUpstreamProtocol, "upstream
  // stream ended before messageStop").
  void on_end(std::vector<ir::StreamEvent>& out) override;

  // messageStop (the stop reason) has been seen.
  bool answered() const { return stopped_; }
  // Usage so far in IR terms (input includes cache reads and writes).
  const ir::Usage& usage() const { return usage_; }

 private:
  enum class BlockKind : std::uint8_t { kUnknown, kText, kReasoning, kTool };
  struct Block {
    BlockKind kind = BlockKind::kUnknown;
    std::uint32_t tool_index = 0;
  };

  void dispatch(std::string_view type, const boost::json::object& o,
                std::vector<ir::StreamEvent>& out);
  void on_block_start(const boost::json::object& o, std::vector<ir::StreamEvent>& out);
  void on_block_delta(const boost::json::object& o, std::vector<ir::StreamEvent>& out);
  void on_metadata(const boost::json::object& o, std::vector<ir::StreamEvent>& out);
  // The block at contentBlockIndex, opened as `kind` if new; null (after a kError) when the
  // index is missing or out of range or the block is of another kind.
  Block* block_for(const boost::json::object& o, BlockKind kind, std::string_view what,
                   std::vector<ir::StreamEvent>& out);
  void finish(std::vector<ir::StreamEvent>& out);

  static constexpr std::size_t kMaxBlocks = 4096;

  std::vector<Block> blocks_;
  std::uint32_t tools_ = 0;
  WireUsage wire_usage_;
  ir::Usage usage_;
  ir::FinishReason finish_ = ir::FinishReason::kUnset;
  std::string stop_sequence_;
  bool started_ = false;
  bool stopped_ = false;
  bool usage_seen_ = false;
};

}  // namespace sluice::protocol::bedrock_converse
