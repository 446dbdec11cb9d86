#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "codec/sse.h"
#include "ir/stream_event.h"
#include "protocol/stream.h"

namespace sluice::protocol::openai_chat {

// Turns an OpenAI-compatible chat.completion.chunk stream into IR stream events, for
// translated traffic (passthrough uses stream_sniffer.h). One instance per request, holding
// the tool-index map and the pending finish reason; not thread-safe; sans-I/O.
//
// Each chunk is parsed with a reused SAX parser that keeps only the fields below (no DOM,
// no per-chunk allocation once its buffers have grown). Only the choice with `index` 0 is
// read (encode_request never asks for n > 1).
//
// Mapping (IR ordering guarantees of ir/stream_event.h hold):
//   - kStart (id, model of the first chunk) once, before any other event except kError.
//   - delta.reasoning_content (vLLM, DeepSeek) or delta.reasoning (OpenRouter, newer vLLM)
//     -> kReasoningDelta; delta.content and delta.refusal -> kTextDelta (empty strings are
//     skipped).
//   - delta.tool_calls[]: OpenAI's `index` is renumbered to zero-based order of first
//     appearance. The first delta of a call -> kToolCallStart (id, name) then, when it
//     carries argument text, kToolCallDelta; later fragments -> kToolCallDelta. A call whose
//     first delta has no id gets "<chunk id>_call_<index>" (deterministic). A delta without
//     `index` continues the last call unless it brings a new id.
//   - usage (the include_usage chunk with "choices":[], or usage on any chunk) -> kUsage
//     with prompt_tokens as input (cache reads included, OpenAI semantics),
//     completion_tokens, cached_tokens, reasoning_tokens.
//   - finish_reason is held and emitted as kFinish when `data: [DONE]` arrives (OpenAI
//     sends the usage chunk after the finish chunk, and the IR puts kUsage before kFinish);
//     [DONE] -> kFinish (kUnset when no finish_reason came), then kDone.
//   - {"error":{...}} (OpenAI), {"object":"error",...} (vLLM) or an `event: error` block ->
//     kError with error_from_openai() (kUpstreamStatus); a chunk that is not a JSON object
//     (depth > 64 included) -> kError kUpstreamProtocol. Nothing is dropped silently.
//   - Blocks without data (comments, keep-alives) and empty data are ignored.
// After kError or kDone, further events are ignored.
class StreamDecoder final : public protocol::StreamDecoder {
 public:
  StreamDecoder();
  ~StreamDecoder();
  StreamDecoder(const StreamDecoder&) = delete;
  StreamDecoder& operator=(const StreamDecoder&) = delete;

  // Appends the IR events for one SSE block to `out` (zero or more). `event`'s views are
  // read during the call only.
  void on_event(const codec::SseEvent& event, std::vector<ir::StreamEvent>& out) override;

  // The upstream closed the stream. Without [DONE] but after a finish_reason, the answer is
  // complete (some compatible servers omit [DONE]): kFinish and kDone are appended.
  // Before any finish_reason: kError kUpstreamProtocol ("stream ended early"). Nothing
  // after kDone or kError.
  void on_end(std::vector<ir::StreamEvent>& out) override;

  // kDone or kError has been emitted.
  bool finished() const override { return done_ || failed_; }

  // Distinct unknown fields of the root, choice, delta, tool call, function and usage objects
  // over the whole stream (known_fields.h; protocol/drift.h).
  std::uint32_t unknown_fields() const override;

 private:
  class ChunkParser;

  void emit_chunk(std::vector<ir::StreamEvent>& out);
  void emit_done(std::vector<ir::StreamEvent>& out);
  void fail(Error error, std::vector<ir::StreamEvent>& out);
  std::uint32_t tool_index(std::int64_t openai_index, bool has_id, std::string_view id,
                           bool& is_new);

  std::unique_ptr<ChunkParser> parser_;
  bool started_ = false;
  bool done_ = false;
  bool failed_ = false;
  bool finish_seen_ = false;
  ir::FinishReason finish_ = ir::FinishReason::kUnset;
  std::string response_id_;
  // OpenAI tool_calls[].index of each call, position = IR index.
  std::vector<std::int64_t> tool_indexes_;
  std::string last_tool_id_;
};

}  // namespace sluice::protocol::openai_chat
