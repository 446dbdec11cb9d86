#include "protocol/anthropic/stream_decoder.h"

#include <string>

#include "codec/json_read.h"
#include "protocol/anthropic/wire_json.h"

namespace sluice::protocol::anthropic {
namespace json = boost::json;

namespace {

// The event types of the Messages stream; others are schema drift, skipped (Anthropic's
// versioning policy: new event types may appear and clients must tolerate them).
bool known_event(std::string_view type) {
  static constexpr std::string_view kEvents[] = {
      "message_start",
      "content_block_start",
      "content_block_delta",
      "content_block_stop",
      "message_delta",
      "message_stop",
      "error",
      "ping",
  };
  return Drift::is_known(type, kEvents);
}

std::optional<std::uint64_t> index_of(const json::object& o) {
  const json::value* v = o.if_contains("index");
  return v == nullptr ? std::nullopt : codec::as_count(*v);
}

}  // namespace

void StreamDecoder::on_event(const codec::SseEvent& event, std::vector<ir::StreamEvent>& out) {
  decode(event.event, event.data, out);
}

void StreamDecoder::decode(std::string_view event_name, std::string_view data,
                           std::vector<ir::StreamEvent>& out) {
  if (finished_) {
    return;
  }
  // The live API sends `data: {"type": "ping"}` every few seconds; skip it without parsing.
  if (event_name == "ping") {
    return;
  }
  if (!event_name.empty() && !known_event(event_name)) {
    drift_.unknown(event_name);
    return;
  }
  parse_event(event_name, data, out, [&](const json::object& o) {
    std::string_view type = event_name;
    if (type.empty()) {
      type = wire::string_at(o, "type").value_or("");
    }
    dispatch(type, o, out);
  });
}

void StreamDecoder::on_end(std::vector<ir::StreamEvent>& out) {
  if (finished_) {
    return;
  }
  if (answered_) {
    // The stop reason and final usage came in message_delta; only message_stop is missing.
    out.push_back(make(ir::StreamEventKind::kDone));
    finished_ = true;
    return;
  }
  fail("upstream stream ended before message_stop", out);
}

void StreamDecoder::dispatch(std::string_view type, const json::object& o,
                             std::vector<ir::StreamEvent>& out) {
  if (!known_event(type)) {
    drift_.unknown(type);
    return;
  }
  drift_.fields(o, wire::known::kEvent);
  // ir/stream_event.h promises kStart first. Before message_start only error (and ping) can
  // be translated: content, message_delta or message_stop there would reach the encoder
  // without a kStart (an id-less message_start). Found by tests/fuzz/anthropic_stream_fuzz.
  if (!started_ && type != "message_start" && type != "error" && type != "ping") {
    fail("cannot translate " + std::string(type) + " before message_start", out);
    return;
  }
  if (type == "content_block_delta") {
    on_block_delta(o, out);
  } else if (type == "content_block_start") {
    on_block_start(o, out);
  } else if (type == "content_block_stop") {
    if (block_at(o) == nullptr) {
      fail("cannot translate content_block_stop for an unknown block index", out);
    }
  } else if (type == "message_start") {
    const json::value* m = o.if_contains("message");
    if (started_ || m == nullptr || !m->is_object()) {
      fail("cannot translate message_start: missing message object or sent twice", out);
      return;
    }
    const json::object& msg = m->get_object();
    drift_.fields(msg, wire::known::kMessage);
    started_ = true;
    ir::StreamEvent start = make(ir::StreamEventKind::kStart);
    start.id.assign(wire::string_at(msg, "id").value_or(""));
    start.model.assign(wire::string_at(msg, "model").value_or(""));
    out.push_back(std::move(start));
    if (const json::value* u = msg.if_contains("usage"); u != nullptr && !u->is_null()) {
      merge_usage(*u, out);
    }
  } else if (type == "message_delta") {
    on_message_delta(o, out);
  } else if (type == "message_stop") {
    // kFinish (from message_delta) must come before kDone (ir/stream_event.h).
    if (!answered_) {
      fail("cannot translate message_stop before message_delta", out);
      return;
    }
    out.push_back(make(ir::StreamEventKind::kDone));
    finished_ = true;
  } else if (type == "error") {
    fail(wire::error_event(o), out);
  }
}

void StreamDecoder::on_block_start(const json::object& o, std::vector<ir::StreamEvent>& out) {
  const auto index = index_of(o);
  const json::value* cb = o.if_contains("content_block");
  if (!index || *index >= kMaxBlocks || cb == nullptr) {
    fail("cannot translate content_block_start: missing or out-of-range index or block", out);
    return;
  }
  auto part = wire::content_block(*cb);
  if (!part) {
    fail(std::move(part).error(), out);
    return;
  }
  drift_.fields(cb->get_object(), wire::known::kBlock);
  if (*index >= blocks_.size()) {
    blocks_.resize(*index + 1);
  }
  Block& block = blocks_[*index];
  switch (part->kind) {
    case ir::PartKind::kText:
      block.kind = BlockKind::kText;
      if (!part->text.empty()) {
        ir::StreamEvent e = make(ir::StreamEventKind::kTextDelta);
        e.text = std::move(part->text);
        out.push_back(std::move(e));
      }
      break;
    case ir::PartKind::kReasoning:
      block.kind = BlockKind::kThinking;
      if (!part->text.empty()) {
        ir::StreamEvent e = make(ir::StreamEventKind::kReasoningDelta);
        e.text = std::move(part->text);
        out.push_back(std::move(e));
      }
      if (!part->signature.empty()) {
        ir::StreamEvent e = make(ir::StreamEventKind::kReasoningSignature);
        e.text = std::move(part->signature);
        out.push_back(std::move(e));
      }
      break;
    case ir::PartKind::kRedactedReasoning: {
      block.kind = BlockKind::kRedacted;
      ir::StreamEvent e = make(ir::StreamEventKind::kRedactedReasoning);
      e.text = std::move(part->signature);
      out.push_back(std::move(e));
      break;
    }
    case ir::PartKind::kToolCall: {
      block.kind = BlockKind::kTool;
      block.tool_index = tools_++;
      ir::StreamEvent e = make(ir::StreamEventKind::kToolCallStart);
      e.index = block.tool_index;
      e.id = std::move(part->id);
      e.name = std::move(part->name);
      out.push_back(std::move(e));
      // The API starts tool_use blocks with "input":{} and streams the input as
      // input_json_delta; a block that arrives with its input filled in is passed on whole.
      if (part->arguments != "{}") {
        ir::StreamEvent d = make(ir::StreamEventKind::kToolCallDelta);
        d.index = block.tool_index;
        d.text = std::move(part->arguments);
        out.push_back(std::move(d));
      }
      break;
    }
    case ir::PartKind::kImage:
    case ir::PartKind::kToolResult:
      fail("cannot translate content_block_start of this type", out);
      break;
  }
}

void StreamDecoder::on_block_delta(const json::object& o, std::vector<ir::StreamEvent>& out) {
  const Block* block = block_at(o);
  const json::value* d = o.if_contains("delta");
  if (block == nullptr || d == nullptr || !d->is_object()) {
    fail("cannot translate content_block_delta: unknown block index or missing delta", out);
    return;
  }
  const json::object& delta = d->get_object();
  drift_.fields(delta, wire::known::kBlockDelta);
  const std::string_view type = wire::string_at(delta, "type").value_or("");
  struct Mapping {
    std::string_view delta_type;
    std::string_view field;
    BlockKind block;
    ir::StreamEventKind kind;
  };
  static constexpr Mapping kMappings[] = {
      {"text_delta", "text", BlockKind::kText, ir::StreamEventKind::kTextDelta},
      {"input_json_delta", "partial_json", BlockKind::kTool, ir::StreamEventKind::kToolCallDelta},
      {"thinking_delta", "thinking", BlockKind::kThinking, ir::StreamEventKind::kReasoningDelta},
      {"signature_delta", "signature", BlockKind::kThinking,
       ir::StreamEventKind::kReasoningSignature},
  };
  for (const Mapping& m : kMappings) {
    if (m.delta_type != type) {
      continue;
    }
    auto text = wire::string_at(delta, m.field);
    if (!text || block->kind != m.block) {
      fail("cannot translate " + std::string(type) + ": missing field or wrong block type", out);
      return;
    }
    emit(m.kind, *text, block->tool_index, out);
    return;
  }
  fail("cannot translate content_block_delta of type '" + std::string(type) + "'", out);
}

void StreamDecoder::on_message_delta(const json::object& o, std::vector<ir::StreamEvent>& out) {
  const json::value* d = o.if_contains("delta");
  if (d == nullptr || !d->is_object()) {
    fail("cannot translate message_delta without a delta object", out);
    return;
  }
  if (answered_) {
    // A second stop reason would be a second kFinish (ir/stream_event.h: once).
    fail("cannot translate a second message_delta", out);
    return;
  }
  const json::object& delta = d->get_object();
  drift_.fields(delta, wire::known::kMessageDelta);
  ir::StreamEvent finish = make(ir::StreamEventKind::kFinish);
  finish.finish = finish_reason(wire::string_at(delta, "stop_reason").value_or(""));
  if (finish.finish == ir::FinishReason::kStopSequence) {
    finish.text.assign(wire::string_at(delta, "stop_sequence").value_or(""));
  }
  out.push_back(std::move(finish));
  answered_ = true;
  if (const json::value* u = o.if_contains("usage"); u != nullptr && !u->is_null()) {
    merge_usage(*u, out);
  }
}

bool StreamDecoder::merge_usage(const json::value& usage, std::vector<ir::StreamEvent>& out) {
  auto converted = wire::merge_usage(usage, wire_usage_, drift_);
  if (!converted) {
    fail(std::move(converted).error(), out);
    return false;
  }
  usage_ = *converted;
  ir::StreamEvent e = make(ir::StreamEventKind::kUsage);
  e.usage = usage_;
  out.push_back(std::move(e));
  return true;
}

const StreamDecoder::Block* StreamDecoder::block_at(const json::object& o) const {
  const auto index = index_of(o);
  if (!index || *index >= blocks_.size() || blocks_[*index].kind == BlockKind::kUnknown) {
    return nullptr;
  }
  return &blocks_[*index];
}

}  // namespace sluice::protocol::anthropic
