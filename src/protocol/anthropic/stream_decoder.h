#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include <boost/json/object.hpp>

#include "codec/sse.h"
#include "ir/stream_event.h"
#include "protocol/anthropic/conventions.h"
#include "protocol/json_stream_decoder.h"

namespace sluice::protocol::anthropic {

// Translates an Anthropic Messages SSE stream (already split into events by codec::SseParser)
// into IR stream events, keeping the ordering contract of ir/stream_event.h. One instance per
// upstream response; not thread-safe; not copyable or movable (it owns a parse arena).
//
//   message_start          -> kStart {id, model}, kUsage (message.usage)
//   content_block_start    -> text / thinking: the block's initial text, if any, as a delta;
//                             redacted_thinking -> kRedactedReasoning {text = data};
//                             tool_use -> kToolCallStart {index, id, name} where index counts
//                             tool_use blocks from 0 (not the content block index)
//   content_block_delta    -> text_delta -> kTextDelta, thinking_delta -> kReasoningDelta,
//                             signature_delta -> kReasoningSignature, input_json_delta ->
//                             kToolCallDelta (empty fragments are skipped)
//   content_block_stop     -> nothing
//   message_delta          -> kFinish {finish, text = stop_sequence}, kUsage (cumulative: the
//                             message_delta usage merged over message_start's)
//   message_stop           -> kDone
//   error                  -> kError (errors.h error_from_wire: the upstream type is kept in
//                             Error::code(), e.g. overloaded_error with status 529)
//   ping                   -> nothing
//   any other event type   -> nothing; counted as schema drift (unknown_fields()): the API
//                             may add event types and asks clients to tolerate them
// Anything the IR cannot express — unknown block or delta types (server_tool_use,
// citations_delta, ...), invalid JSON, deltas for unknown blocks — becomes one kError
// (kUpstreamProtocol, "cannot translate ...") that ends the stream: never dropped.
// After kDone or kError further input is ignored. finished() and unknown_fields() (distinct
// unknown event types, skipped, and unknown fields of the events, message, content blocks,
// deltas and usage: wire_json.h known::) come from JsonStreamDecoder.
class StreamDecoder final : public protocol::JsonStreamDecoder {
 public:
  // Appends the IR events for one SSE event to `out`. `event.event` names the type; when it
  // is empty the JSON `type` field is used.
  void on_event(const codec::SseEvent& event, std::vector<ir::StreamEvent>& out) override;
  void decode(std::string_view event_name, std::string_view data,
              std::vector<ir::StreamEvent>& out);

  // End of the upstream body. A stream that ended after its message_delta (the stop reason)
  // but before message_stop is complete: kFinish was emitted already, kDone is appended. One
  // that ended earlier gets a kError (kUpstreamProtocol, "upstream stream ended before
  // message_stop").
  void on_end(std::vector<ir::StreamEvent>& out) override;

  // message_delta (the stop reason) has been seen.
  bool answered() const { return answered_; }
  // Cumulative usage so far in IR terms (input includes cache reads and writes).
  const ir::Usage& usage() const { return usage_; }

 private:
  enum class BlockKind : std::uint8_t { kUnknown, kText, kThinking, kRedacted, kTool };
  struct Block {
    BlockKind kind = BlockKind::kUnknown;
    std::uint32_t tool_index = 0;
  };

  void dispatch(std::string_view type, const boost::json::object& o,
                std::vector<ir::StreamEvent>& out);
  void on_block_start(const boost::json::object& o, std::vector<ir::StreamEvent>& out);
  void on_block_delta(const boost::json::object& o, std::vector<ir::StreamEvent>& out);
  void on_message_delta(const boost::json::object& o, std::vector<ir::StreamEvent>& out);
  bool merge_usage(const boost::json::value& usage, std::vector<ir::StreamEvent>& out);
  const Block* block_at(const boost::json::object& o) const;

  static constexpr std::size_t kMaxBlocks = 4096;

  std::vector<Block> blocks_;
  std::uint32_t tools_ = 0;
  WireUsage wire_usage_;
  ir::Usage usage_;
  bool started_ = false;
  bool answered_ = false;
};

}  // namespace sluice::protocol::anthropic
