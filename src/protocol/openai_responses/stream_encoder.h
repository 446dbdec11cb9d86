#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "codec/json_writer.h"
#include "core/error.h"
#include "ir/stream_event.h"
#include "ir/usage.h"
#include "protocol/openai_responses/tool_names.h"
#include "protocol/stream.h"

namespace sluice::protocol::openai_responses {

// Turns IR stream events (ordering contract in ir/stream_event.h) into an OpenAI Responses event
// stream, for Responses callers whose upstream speaks another protocol (the inverse of
// stream_decoder.h). Each event is `event: <type>\ndata: {"type":<type>,...,
// "sequence_number":n}\n\n` with n counting from 0; no [DONE] (the API sends none). One
// instance per request; not thread-safe; sans-I/O.
//
//   kStart            response.created and response.in_progress (the response in_progress, no
//                     output, usage null), written at once
//   kTextDelta        a message item (output_item.added, content_part.added with an empty
//                     output_text) opened when the open item is not one, then
//                     response.output_text.delta
//   kReasoningDelta   a reasoning item (output_item.added, reasoning_summary_part.added) opened
//                     likewise, then response.reasoning_summary_text.delta
//   kReasoningSignature  the open reasoning item's encrypted_content (written in its
//                     output_item.done); without one open, a reasoning item of its own
//   kRedactedReasoning   a reasoning item {summary: [], encrypted_content} added and done at once
//   kToolCallStart    a function_call item (output_item.added, arguments "", call_id = the IR id
//                     or "call_<..>_<index>" when empty); tool calls stay open to the end, so
//                     parallel calls may interleave (every event names its output_index)
//                     A call of a namespace's tool (per the request's ToolNames) is a
//                     function_call with the tool's own `name` and its `namespace`; a call of a
//                     custom tool is a custom_tool_call item ("ctc_.." id, input "")
//   kToolCallDelta    response.function_call_arguments.delta for that item; a custom tool's
//                     arguments are held (they are JSON around the text), and its text is
//                     written when it closes: response.custom_tool_call_input.delta (the whole
//                     text, when not empty) and response.custom_tool_call_input.done
//   kUsage            held (cumulative in the IR): the last one goes into the final response
//   kFinish           held
//   kDone             every open item closed in output order (output_text.done /
//                     content_part.done, reasoning_summary_text.done / summary_part.done,
//                     function_call_arguments.done, output_item.done), then response.completed,
//                     or response.incomplete with incomplete_details.reason for kLength
//                     (max_output_tokens) and kContentFilter (content_filter); the final
//                     response carries every output item in full and the usage (null when the
//                     upstream reported none)
// A text or reasoning item closes when an item of another kind opens. Item ids are
// "<msg|rs|fc>_<response id>_<output_index>"; the response id is conventions.h response_id().
// Text and argument deltas are written in the call of the event that carried them.
//
// Errors: kError, and what the stream cannot express (content after kFinish, a tool call started
// out of order or twice, arguments for a call never started: kUpstreamProtocol), write one
// `error` event — {"type":"error","code","message","param"} as the OpenAPI spec has it, plus the
// same under "error" (with "type") as the live API sends it — then, once the stream started,
// response.failed with the response's error; error() holds the Error. Nothing after that.
class StreamEncoder final : public protocol::StreamEncoder {
 public:
  // `created`: the Unix time the response reports (the ingress passes now; tests a constant).
  // `names`: the request's tools (request_decoder.h), to answer in the caller's tool names.
  explicit StreamEncoder(std::int64_t created, ToolNames names = {});

  void encode(const ir::StreamEvent& event, std::string& out) override;
  bool finished() const override { return finished_; }
  const std::optional<Error>& error() const override { return error_; }
  // The response id the caller sees (empty before kStart).
  const std::string& response_id() const { return id_; }

 private:
  enum class Kind : std::uint8_t { kMessage, kReasoning, kFunctionCall, kCustomToolCall };
  struct Item {
    Kind kind = Kind::kMessage;
    std::string id;
    std::string fields;       // ,"item_id":..,"output_index":.. as every item event has them
    codec::EscapedText text;  // message text, reasoning summary or call arguments so far
    std::string call_id;
    std::string name;
    std::string space;          // the tool's namespace
    std::string input;          // a custom tool call's text, once it closed
    std::string encrypted;      // reasoning
    bool summary_part = false;  // reasoning: the summary part was added
    bool closed = false;
  };

  void begin_event(std::string& out, std::string_view type);
  void end_event(std::string& out);
  void item_fields(std::string& out, std::size_t index);
  void write_item(std::string& out, std::size_t index, bool done);
  void start(std::string& out);
  bool ready(std::string& out);
  std::size_t open_item(std::string& out, Kind kind);
  void close_item(std::string& out, std::size_t index);
  void close_open(std::string& out);
  void on_text(const ir::StreamEvent& event, std::string& out);
  void on_reasoning(const ir::StreamEvent& event, std::string& out);
  void on_signature(const ir::StreamEvent& event, std::string& out);
  void on_redacted(const ir::StreamEvent& event, std::string& out);
  void on_tool_start(const ir::StreamEvent& event, std::string& out);
  void on_tool_delta(const ir::StreamEvent& event, std::string& out);
  void finish(std::string& out);
  void write_response(std::string& out, std::string_view status, std::string_view reason,
                      bool with_output);
  void fail(const Error& error, std::string& out);

  static constexpr std::size_t kNone = static_cast<std::size_t>(-1);

  std::int64_t created_;
  ToolNames names_;
  std::string id_;
  std::string model_;
  std::uint64_t sequence_ = 0;
  std::vector<Item> items_;
  std::vector<std::size_t> tools_;  // IR tool index -> item index
  std::size_t open_ = kNone;        // the open message or reasoning item
  ir::Usage usage_;
  bool has_usage_ = false;
  ir::FinishReason finish_ = ir::FinishReason::kUnset;
  bool finish_seen_ = false;
  bool started_ = false;
  bool finished_ = false;
  std::optional<Error> error_;
};

// The `error` event of a stream, as StreamEncoder writes it; `sequence_number` is left out when
// negative (an error appended to a stream relayed verbatim, whose numbering the gateway does not
// follow).
void append_error_event(std::string& out, const Error& error, std::int64_t sequence_number);

}  // namespace sluice::protocol::openai_responses
