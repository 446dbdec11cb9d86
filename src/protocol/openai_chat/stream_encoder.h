#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "core/error.h"
#include "ir/stream_event.h"
#include "ir/usage.h"
#include "protocol/stream.h"

namespace sluice::protocol::openai_chat {

// Turns IR stream events (ordering contract in ir/stream_event.h) into an OpenAI Chat
// Completions stream, for OpenAI callers whose upstream speaks another protocol (the inverse of
// stream_decoder.h). Every event is `data: <chat.completion.chunk>\n\n` (no `event:` lines), the
// stream ends with `data: [DONE]\n\n`. One instance per request; not thread-safe; sans-I/O.
//
// Every chunk carries the same "id" (kStart's id prefixed "chatcmpl-" unless it has it),
// "object":"chat.completion.chunk", "created" (given to the constructor) and "model" (kStart's),
// then "choices":[{"index":0,"delta":{...},"logprobs":null,"finish_reason":...}]. Sequence:
//
//   kStart             the role chunk, delta {"role":"assistant","content":""}, written at once
//                      (the caller sees the stream open before the first token exists)
//   kTextDelta         delta {"content": text}
//   kReasoningDelta    delta {"reasoning_content": text}: the vLLM / DeepSeek convention that
//                      stream_decoder.h reads back; OpenAI's own Chat Completions streams no
//                      reasoning text, so OpenAI SDKs ignore the field
//   kToolCallStart     delta {"tool_calls":[{"index","id","type":"function",
//                      "function":{"name","arguments":""}}]}; index = the IR tool index
//                      (zero-based, order of first appearance); an empty id becomes
//                      "<chunk id>_call_<index>" (what stream_decoder.h invents for a missing id)
//   kToolCallDelta     delta {"tool_calls":[{"index","function":{"arguments": fragment}}]}
//   kUsage             held (the IR repeats it, cumulative): only the last one is written
//   kFinish            delta {} with finish_reason (conventions.h finish_reason_to_openai)
//   kDone              when the caller asked for usage (stream_options.include_usage) and the
//                      upstream reported some: a chunk with "choices":[] and "usage" (as
//                      conventions.h append_usage_json); then `data: [DONE]`. A kDone
//                      without kFinish writes the finish chunk first ("stop").
// With include_usage every other chunk carries "usage":null, as OpenAI's do. Empty text,
// reasoning and argument deltas write nothing. Text and tool deltas are written in the encode()
// call of the event that carried them: nothing is buffered.
//
// Dropped, counted in dropped_events(): kReasoningSignature and kRedactedReasoning. Chat
// Completions has no field for a reasoning signature or encrypted reasoning, and a client could
// not send them back anyway (its request shape has no reasoning input either).
//
// Errors: a kError event, and events the stream can no longer express (content or tool
// arguments after the finish chunk, a tool call started out of order or twice, arguments for a
// tool call never started: kUpstreamProtocol), write one `data: {"error":{"message","type",
// "param","code"}}` event (errors.h encode_error) and end the stream without [DONE]; error()
// then holds the Error. Nothing is written after [DONE] or the error event.
class StreamEncoder final : public protocol::StreamEncoder {
 public:
  // `include_usage`: the caller's stream_options.include_usage. `created`: the Unix time every
  // chunk reports (the ingress passes the current time; tests a constant).
  StreamEncoder(bool include_usage, std::int64_t created);

  void encode(const ir::StreamEvent& event, std::string& out) override;

  // [DONE] or the error event has been written.
  bool finished() const override { return finished_; }
  const std::optional<Error>& error() const override { return error_; }
  // IR events the stream could not carry and left out (reasoning signatures, redacted
  // reasoning). The stream itself stays valid; the count is for the access log.
  std::uint32_t dropped_events() const override { return dropped_; }

 private:
  // Writes the role chunk the first time; builds head_ and tail_.
  void start(std::string& out);
  // head_ + the choice up to its delta object; the caller writes the delta and end_chunk().
  void begin_chunk(std::string& out) const;
  void end_chunk(std::string& out) const { out.append(tail_); }
  // Starts the stream when needed; false (and the stream failed) when content can no longer be
  // written because the finish chunk went out.
  bool ready_for_content(std::string& out);
  void write_finish(std::string& out, ir::FinishReason finish);
  void on_tool_start(const ir::StreamEvent& event, std::string& out);
  void on_tool_delta(const ir::StreamEvent& event, std::string& out);
  void finish_stream(std::string& out);
  void fail(const Error& error, std::string& out);

  bool include_usage_;
  std::int64_t created_;
  std::string id_;
  std::string model_;
  // `data: {"id":..,"object":"chat.completion.chunk","created":..,"model":..,"choices":[`
  std::string head_;
  // `,"logprobs":null,"finish_reason":null}]` [`,"usage":null`] `}\n\n`
  std::string tail_;
  std::uint32_t tools_ = 0;  // tool calls started; the next one must have this index
  ir::Usage usage_;
  bool has_usage_ = false;
  bool started_ = false;
  bool finish_written_ = false;
  bool finished_ = false;
  std::uint32_t dropped_ = 0;
  std::optional<Error> error_;
};

}  // namespace sluice::protocol::openai_chat
