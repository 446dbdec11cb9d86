#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/error.h"
#include "ir/stream_event.h"
#include "ir/usage.h"
#include "protocol/anthropic/conventions.h"
#include "protocol/stream.h"

namespace sluice::protocol::anthropic {

// Turns IR stream events (ordering contract in ir/stream_event.h) into Anthropic Messages SSE
// bytes, each event framed as "event: <type>\ndata: <json>\n\n". One instance per request;
// not thread-safe. Output sequence:
//
//   message_start      deferred from kStart to the first event that has something to say
//                      (a kUsage, content, kFinish, kDone), so an upstream that reports input
//                      usage up front (Anthropic) gets it into message_start without delaying
//                      any text. When usage is not known yet (OpenAI sends it last),
//                      message_start carries the gateway's estimate of the input tokens (given
//                      to the constructor; several frameworks read input usage only there, so
//                      0 would be wrong) and output_tokens 0; message_delta carries the exact
//                      figures once the upstream reports them.
//   content_block_*    blocks numbered from 0 in emission order; text, thinking (thinking_delta,
//                      signature_delta), redacted_thinking (start + stop), tool_use (start with
//                      "input":{}, input_json_delta, stop). Text and thinking deltas are written
//                      as they arrive; empty deltas are skipped.
//   message_delta      on kDone: stop_reason / stop_sequence from kFinish (end_turn when no
//                      kFinish came), usage = the last kUsage (all four Anthropic counts).
//   message_stop
//
// Parallel tool calls are never interleaved: the arguments of the tool call whose block is open
// stream live; other calls are buffered and written as whole blocks when the open block closes.
// The open tool block is closed early when another tool call starts (or is waiting) and the open
// call's arguments already form a complete JSON value. Blocks close when another kind of
// content starts, and at kFinish / kDone (which also flush every buffered call).
// Tool ids follow conventions.h tool_use_id (an empty id: "<message id>_<tool index>").
//
// Usage whose cache counts exceed its input is written clamped (conventions.h
// to_wire_usage_clamped) and counted in usage_clamped(): the answer is paid for and still reaches
// the caller.
//
// Errors: a kError event, or a conversion that is impossible (tool arguments arriving for a
// block already closed, a delta for a tool call never started), writes one `event: error`
// {"type":"error","error":{"type","message"}} and ends the stream; error() then holds the Error.
// Events after the end produce no output.
class StreamEncoder final : public protocol::StreamEncoder {
 public:
  StreamEncoder() = default;
  explicit StreamEncoder(std::uint64_t estimated_input_tokens)
      : estimated_input_tokens_(estimated_input_tokens) {}

  // Appends the bytes for `event` to `out` (possibly none).
  void encode(const ir::StreamEvent& event, std::string& out) override;

  // message_stop or an error event has been written.
  bool finished() const override { return finished_; }
  // The error that ended the stream (a kError passed in, or a conversion failure).
  const std::optional<Error>& error() const override { return error_; }
  std::uint32_t usage_clamped() const override { return usage_clamped_; }
  // The last usage seen (IR terms), for metering; zeros until a kUsage arrives.
  const ir::Usage& usage() const { return usage_; }
  bool has_usage() const { return has_usage_; }
  // Content blocks started so far.
  std::uint32_t content_blocks() const { return next_block_; }

 private:
  enum class Open : std::uint8_t { kNone, kText, kThinking, kTool };

  // Tracks whether streamed JSON text has reached the end of its top-level value.
  struct JsonScan {
    std::uint32_t depth = 0;
    bool started = false;
    bool in_string = false;
    bool escape = false;
    void feed(std::string_view text);
    bool complete() const { return started && depth == 0 && !in_string; }
  };

  struct ToolCall {
    std::uint32_t index = 0;  // IR tool index
    std::string id;           // Anthropic id (mapped)
    std::string name;
    std::string buffered;  // arguments not yet written (calls waiting for their block)
    JsonScan scan;
    bool started = false;  // its content block has been written
    bool closed = false;
  };

  void start_message(std::string& out);
  void close_open(std::string& out);
  void open_block(std::string& out, Open kind);
  void write_tool_start(std::string& out, const ToolCall& tool);
  void write_tool_delta(std::string& out, std::string_view json);
  // Writes waiting tool calls in order: complete ones as whole blocks; the first incomplete one
  // becomes the open block when `open_incomplete`, otherwise stops there. `all` writes every
  // waiting call whole regardless of completeness (end of message).
  void flush_waiting(std::string& out, bool open_incomplete, bool all);
  bool has_waiting() const;
  ToolCall* find_tool(std::uint32_t index);
  void on_tool_start(const ir::StreamEvent& event, std::string& out);
  void on_tool_delta(const ir::StreamEvent& event, std::string& out);
  void end_content(std::string& out);
  void finish_message(std::string& out);
  void fail(const Error& error, std::string& out);
  WireUsage wire_usage();

  std::string id_;
  std::string model_;
  std::vector<ToolCall> tools_;
  std::size_t open_tool_ = 0;  // position in tools_ when open_ == kTool
  Open open_ = Open::kNone;
  bool thinking_signed_ = false;  // the open thinking block already has its signature
  std::uint32_t next_block_ = 0;
  ir::FinishReason finish_ = ir::FinishReason::kUnset;
  std::string stop_sequence_;
  ir::Usage usage_;
  bool has_usage_ = false;
  bool started_ = false;
  bool finished_ = false;
  std::optional<Error> error_;
  std::uint32_t usage_clamped_ = 0;
  std::uint64_t estimated_input_tokens_ = 0;
};

}  // namespace sluice::protocol::anthropic
