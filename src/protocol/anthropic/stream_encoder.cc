#include "protocol/anthropic/stream_encoder.h"

#include <string>

#include "codec/json_writer.h"
#include "protocol/anthropic/conventions.h"
#include "protocol/anthropic/errors.h"

namespace sluice::protocol::anthropic {

namespace {

// Every event but `error` repeats its name as the data's "type": this writes the event line
// and opens that object; the caller adds the other members (each with a leading comma), the
// closing brace, then end_event().
void begin_event(std::string& out, std::string_view type) {
  out.append("event: ").append(type).append("\ndata: {\"type\":\"").append(type).push_back('"');
}

// The same for the content_block_* events, with "index":<index> already written.
void begin_block_event(std::string& out, std::string_view type, std::uint32_t index) {
  begin_event(out, type);
  codec::JsonWriter(out).raw(R"(,"index":)").number(std::uint64_t{index});
}

void end_event(std::string& out) { out.append("\n\n"); }

void write_block_stop(std::string& out, std::uint32_t index) {
  begin_block_event(out, "content_block_stop", index);
  out.push_back('}');
  end_event(out);
}

// content_block_delta for block `index`: {"type":<delta_type>,<field>:<text>}.
void write_delta(std::string& out, std::uint32_t index, std::string_view delta_type,
                 std::string_view field, std::string_view text) {
  begin_block_event(out, "content_block_delta", index);
  codec::JsonWriter w(out);
  w.raw(R"(,"delta":{"type":)").string(delta_type).ch(',').key(field).string(text).raw("}}");
  end_event(out);
}

bool all_whitespace(std::string_view text) {
  for (char c : text) {
    if (c != ' ' && c != '\n' && c != '\r' && c != '\t') {
      return false;
    }
  }
  return true;
}

}  // namespace

void StreamEncoder::JsonScan::feed(std::string_view text) {
  for (char c : text) {
    if (in_string) {
      if (escape) {
        escape = false;
      } else if (c == '\\') {
        escape = true;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    switch (c) {
      case '{':
      case '[':
        started = true;
        ++depth;
        break;
      case '}':
      case ']':
        if (depth > 0) {
          --depth;
        }
        break;
      case '"':
        in_string = true;
        break;
      default:
        break;
    }
  }
}

void StreamEncoder::encode(const ir::StreamEvent& event, std::string& out) {
  if (finished_) {
    return;
  }
  switch (event.kind) {
    case ir::StreamEventKind::kStart:
      if (!started_) {
        id_ = event.id;
        model_ = event.model;
      }
      return;
    case ir::StreamEventKind::kTextDelta:
      if (event.text.empty()) {
        return;
      }
      start_message(out);
      if (finished_) {
        return;
      }
      if (open_ != Open::kText) {
        end_content(out);
        open_block(out, Open::kText);
      }
      write_delta(out, next_block_ - 1, "text_delta", "text", event.text);
      return;
    case ir::StreamEventKind::kReasoningDelta:
    case ir::StreamEventKind::kReasoningSignature: {
      if (event.text.empty()) {
        return;
      }
      start_message(out);
      if (finished_) {
        return;
      }
      // A signature completes a thinking block: more thinking after it starts a new block.
      if (open_ != Open::kThinking || thinking_signed_) {
        end_content(out);
        open_block(out, Open::kThinking);
      }
      const bool signature = event.kind == ir::StreamEventKind::kReasoningSignature;
      write_delta(out, next_block_ - 1, signature ? "signature_delta" : "thinking_delta",
                  signature ? "signature" : "thinking", event.text);
      thinking_signed_ = signature;
      return;
    }
    case ir::StreamEventKind::kRedactedReasoning: {
      start_message(out);
      if (finished_) {
        return;
      }
      end_content(out);
      begin_block_event(out, "content_block_start", next_block_);
      codec::JsonWriter w(out);
      w.raw(R"(,"content_block":{"type":"redacted_thinking","data":)").string(event.text).raw("}}");
      end_event(out);
      write_block_stop(out, next_block_);
      ++next_block_;
      return;
    }
    case ir::StreamEventKind::kToolCallStart:
      start_message(out);
      if (!finished_) {
        on_tool_start(event, out);
      }
      return;
    case ir::StreamEventKind::kToolCallDelta:
      on_tool_delta(event, out);
      return;
    case ir::StreamEventKind::kUsage:
      usage_ = event.usage;
      has_usage_ = true;
      start_message(out);
      return;
    case ir::StreamEventKind::kFinish:
      finish_ = event.finish;
      if (event.finish == ir::FinishReason::kStopSequence) {
        stop_sequence_ = event.text;
      }
      start_message(out);
      if (!finished_) {
        close_open(out);
        flush_waiting(out, false, true);
      }
      return;
    case ir::StreamEventKind::kError:
      fail(event.error, out);
      return;
    case ir::StreamEventKind::kDone:
      finish_message(out);
      return;
  }
}

void StreamEncoder::start_message(std::string& out) {
  if (started_) {
    return;
  }
  started_ = true;
  WireUsage usage = wire_usage();
  if (!has_usage_ || usage.input_tokens == 0) {
    usage.input_tokens = estimated_input_tokens_;  // the upstream has not reported it yet
  }
  // Output so far stays out of message_start: message_delta carries the whole count, and
  // clients that add the two (LangChain) would count early output (Gemini's thoughts) twice.
  usage.output_tokens = 0;
  begin_event(out, "message_start");
  codec::JsonWriter w(out);
  w.raw(R"(,"message":{"id":)")
      .string(message_id(id_))
      .raw(R"(,"type":"message","role":"assistant","model":)")
      .string(model_)
      .raw(R"(,"content":[],"stop_reason":null,"stop_sequence":null,"usage":)");
  append_usage_json(out, usage);
  out.append("}}");
  end_event(out);
}

void StreamEncoder::close_open(std::string& out) {
  if (open_ == Open::kNone) {
    return;
  }
  write_block_stop(out, next_block_ - 1);
  if (open_ == Open::kTool) {
    tools_[open_tool_].closed = true;
  }
  open_ = Open::kNone;
  thinking_signed_ = false;
}

void StreamEncoder::open_block(std::string& out, Open kind) {
  begin_block_event(out, "content_block_start", next_block_);
  out.append(kind == Open::kText
                 ? R"(,"content_block":{"type":"text","text":""}})"
                 : R"(,"content_block":{"type":"thinking","thinking":"","signature":""}})");
  end_event(out);
  ++next_block_;
  open_ = kind;
  thinking_signed_ = false;
}

void StreamEncoder::write_tool_start(std::string& out, const ToolCall& tool) {
  begin_block_event(out, "content_block_start", next_block_);
  codec::JsonWriter w(out);
  w.raw(R"(,"content_block":{"type":"tool_use","id":)")
      .string(tool.id)
      .raw(R"(,"name":)")
      .string(tool.name)
      .raw(R"(,"input":{}}})");
  end_event(out);
  ++next_block_;
}

void StreamEncoder::write_tool_delta(std::string& out, std::string_view json) {
  write_delta(out, next_block_ - 1, "input_json_delta", "partial_json", json);
}

bool StreamEncoder::has_waiting() const {
  for (const ToolCall& t : tools_) {
    if (!t.started) {
      return true;
    }
  }
  return false;
}

StreamEncoder::ToolCall* StreamEncoder::find_tool(std::uint32_t index) {
  for (ToolCall& t : tools_) {
    if (t.index == index) {
      return &t;
    }
  }
  return nullptr;
}

void StreamEncoder::flush_waiting(std::string& out, bool open_incomplete, bool all) {
  for (std::size_t i = 0; i < tools_.size(); ++i) {
    ToolCall& t = tools_[i];
    if (t.started) {
      continue;
    }
    const bool whole = all || t.scan.complete();
    if (!whole && !open_incomplete) {
      return;  // keep the order of calls: later ones wait behind this one
    }
    write_tool_start(out, t);
    t.started = true;
    if (!t.buffered.empty()) {
      write_tool_delta(out, t.buffered);
      std::string().swap(t.buffered);
    }
    if (!whole) {
      open_ = Open::kTool;
      open_tool_ = i;
      return;
    }
    write_block_stop(out, next_block_ - 1);
    t.closed = true;
  }
}

void StreamEncoder::end_content(std::string& out) {
  close_open(out);
  flush_waiting(out, false, false);
}

void StreamEncoder::on_tool_start(const ir::StreamEvent& event, std::string& out) {
  if (find_tool(event.index) != nullptr) {
    fail(Error(ErrorKind::kUpstreamProtocol,
               "tool call " + std::to_string(event.index) + " started twice"),
         out);
    return;
  }
  ToolCall tool;
  tool.index = event.index;
  tool.id = tool_use_id_or(event.id, message_id(id_) + "_" + std::to_string(event.index));
  tool.name = event.name;
  tools_.push_back(std::move(tool));
  if (open_ != Open::kTool || tools_[open_tool_].scan.complete()) {
    close_open(out);
    flush_waiting(out, true, false);
  }
}

void StreamEncoder::on_tool_delta(const ir::StreamEvent& event, std::string& out) {
  if (event.text.empty()) {
    return;
  }
  ToolCall* tool = find_tool(event.index);
  if (tool == nullptr) {
    fail(Error(ErrorKind::kUpstreamProtocol, "arguments for tool call " +
                                                 std::to_string(event.index) +
                                                 " arrived before the call started"),
         out);
    return;
  }
  if (tool->closed) {
    // A complete value may be followed by whitespace; anything else would be lost.
    if (!all_whitespace(event.text)) {
      fail(Error(ErrorKind::kUpstreamProtocol, "arguments for tool call " +
                                                   std::to_string(event.index) +
                                                   " arrived after its content block was closed"),
           out);
    }
    return;
  }
  tool->scan.feed(event.text);
  if (open_ == Open::kTool && &tools_[open_tool_] == tool) {
    write_tool_delta(out, event.text);
    if (tool->scan.complete() && has_waiting()) {
      close_open(out);
      flush_waiting(out, true, false);
    }
    return;
  }
  tool->buffered.append(event.text);
}

void StreamEncoder::finish_message(std::string& out) {
  start_message(out);
  if (finished_) {
    return;
  }
  close_open(out);
  flush_waiting(out, false, true);
  const WireUsage usage = wire_usage();
  begin_event(out, "message_delta");
  codec::JsonWriter w(out);
  w.raw(R"(,"delta":{"stop_reason":)").string(stop_reason(finish_)).raw(R"(,"stop_sequence":)");
  if (finish_ == ir::FinishReason::kStopSequence) {
    w.string(stop_sequence_);
  } else {
    w.null();
  }
  w.raw(R"(},"usage":)");
  append_usage_json(out, usage);
  out.push_back('}');
  end_event(out);
  begin_event(out, "message_stop");
  out.push_back('}');
  end_event(out);
  finished_ = true;
}

WireUsage StreamEncoder::wire_usage() {
  bool clamped = false;
  WireUsage usage = to_wire_usage_clamped(usage_, clamped);
  if (clamped) {
    ++usage_clamped_;
  }
  return usage;
}

void StreamEncoder::fail(const Error& error, std::string& out) {
  out.append("event: error\ndata: ");  // the data is errors.h's body, "type":"error" included
  append_error_json(out, error_type(error), error.message());
  end_event(out);
  error_ = error;
  finished_ = true;
}

}  // namespace sluice::protocol::anthropic
