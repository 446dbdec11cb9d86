#include "protocol/bedrock_converse/stream_decoder.h"

#include <string>

#include "codec/json_read.h"
#include "protocol/bedrock_converse/errors.h"
#include "protocol/bedrock_converse/wire_json.h"

namespace sluice::protocol::bedrock_converse {
namespace json = boost::json;

namespace {

// ConverseStreamOutput's event members (service-2.json); others are drift, skipped.
bool known_event(std::string_view type) {
  static constexpr std::string_view kEvents[] = {
      "messageStart",     "contentBlockStart", "contentBlockDelta",
      "contentBlockStop", "messageStop",       "metadata",
  };
  return Drift::is_known(type, kEvents);
}

// The stream's exception members all end so (throttlingException, modelStreamErrorException,
// ...); a new one is an error all the same.
bool is_exception(std::string_view type) { return type.ends_with("Exception"); }

}  // namespace

void StreamDecoder::on_event(const codec::SseEvent& event, std::vector<ir::StreamEvent>& out) {
  // codec/upstream_events.h: a `:message-type` error message (no modeled exception) is the
  // event "error", its :error-code in `id` and its :error-message, plain text, in `data`.
  if (event.event == "error" && !finished_) {
    fail(stream_error(event.id, event.data), out);
    return;
  }
  decode(event.event, event.data, out);
}

void StreamDecoder::decode(std::string_view event_type, std::string_view data,
                           std::vector<ir::StreamEvent>& out) {
  if (finished_) {
    return;
  }
  if (is_exception(event_type)) {
    fail(stream_exception(event_type, data), out);
    return;
  }
  if (event_type.empty()) {
    fail("cannot translate an event-stream message without an event type", out);
    return;
  }
  if (!known_event(event_type)) {
    drift_.unknown(event_type);
    return;
  }
  parse_event(event_type, data, out, [&](const json::object& o) { dispatch(event_type, o, out); });
}

void StreamDecoder::on_end(std::vector<ir::StreamEvent>& out) {
  if (finished_) {
    return;
  }
  if (stopped_) {
    finish(out);
    return;
  }
  fail("upstream stream ended before messageStop", out);
}

void StreamDecoder::dispatch(std::string_view type, const json::object& o,
                             std::vector<ir::StreamEvent>& out) {
  drift_.fields(o, wire::known::kEvent);
  if (type == "messageStart") {
    if (started_) {
      fail("cannot translate a second messageStart", out);
      return;
    }
    started_ = true;
    out.push_back(make(ir::StreamEventKind::kStart));
    return;
  }
  // ir/stream_event.h promises kStart first.
  if (!started_) {
    fail("cannot translate " + std::string(type) + " before messageStart", out);
    return;
  }
  if (type == "metadata") {
    on_metadata(o, out);
    return;
  }
  if (stopped_) {
    fail("cannot translate " + std::string(type) + " after messageStop", out);
    return;
  }
  if (type == "contentBlockDelta") {
    on_block_delta(o, out);
  } else if (type == "contentBlockStart") {
    on_block_start(o, out);
  } else if (type == "contentBlockStop") {
    const json::value* index = o.if_contains("contentBlockIndex");
    if (index == nullptr || !codec::as_count(*index)) {
      fail("cannot translate contentBlockStop without a contentBlockIndex", out);
    }
  } else if (type == "messageStop") {
    finish_ = finish_reason(wire::string_at(o, "stopReason").value_or(""));
    stop_sequence_.assign(wire::stop_sequence(o));
    stopped_ = true;
    if (usage_seen_) {
      finish(out);
    }
  }
}

StreamDecoder::Block* StreamDecoder::block_for(const json::object& o, BlockKind kind,
                                               std::string_view what,
                                               std::vector<ir::StreamEvent>& out) {
  const json::value* v = o.if_contains("contentBlockIndex");
  const auto index = v == nullptr ? std::nullopt : codec::as_count(*v);
  if (!index || *index >= kMaxBlocks) {
    fail("cannot translate " + std::string(what) + ": missing or out-of-range contentBlockIndex",
         out);
    return nullptr;
  }
  if (*index >= blocks_.size()) {
    blocks_.resize(*index + 1);
  }
  Block& block = blocks_[*index];
  if (block.kind == BlockKind::kUnknown && kind != BlockKind::kTool) {
    block.kind = kind;  // text and reasoning blocks open with their first delta
  }
  if (block.kind != kind) {
    fail("cannot translate " + std::string(what) + ": content block " + std::to_string(*index) +
             " is of another kind",
         out);
    return nullptr;
  }
  return &block;
}

void StreamDecoder::on_block_start(const json::object& o, std::vector<ir::StreamEvent>& out) {
  const json::value* s = o.if_contains("start");
  const json::value* tool =
      s != nullptr && s->is_object() ? s->get_object().if_contains("toolUse") : nullptr;
  if (tool == nullptr || !tool->is_object()) {
    std::string member = "?";
    if (s != nullptr && s->is_object() && !s->get_object().empty()) {
      const auto& first = *s->get_object().begin();
      member.assign(first.key().data(), first.key().size());
    }
    fail("cannot translate contentBlockStart '" + member + "'", out);
    return;
  }
  const json::object& t = tool->get_object();
  drift_.fields(t, wire::known::kToolUseStart);
  auto id = wire::string_at(t, "toolUseId");
  auto name = wire::string_at(t, "name");
  if (!id || !name) {
    fail("cannot translate contentBlockStart: toolUse lacks toolUseId or name", out);
    return;
  }
  if (auto type = wire::string_at(t, "type"); type && *type == "server_tool_use") {
    fail("cannot translate contentBlockStart 'toolUse' of type server_tool_use", out);
    return;
  }
  const json::value* v = o.if_contains("contentBlockIndex");
  const auto index = v == nullptr ? std::nullopt : codec::as_count(*v);
  if (!index || *index >= kMaxBlocks) {
    fail("cannot translate contentBlockStart: missing or out-of-range contentBlockIndex", out);
    return;
  }
  if (*index >= blocks_.size()) {
    blocks_.resize(*index + 1);
  }
  Block& block = blocks_[*index];
  if (block.kind != BlockKind::kUnknown) {
    fail("cannot translate contentBlockStart for content block " + std::to_string(*index) +
             ", which already started",
         out);
    return;
  }
  block.kind = BlockKind::kTool;
  block.tool_index = tools_++;
  ir::StreamEvent e = make(ir::StreamEventKind::kToolCallStart);
  e.index = block.tool_index;
  e.id.assign(*id);
  e.name.assign(*name);
  out.push_back(std::move(e));
}

void StreamDecoder::on_block_delta(const json::object& o, std::vector<ir::StreamEvent>& out) {
  const json::value* d = o.if_contains("delta");
  if (d == nullptr || !d->is_object() || d->get_object().size() != 1) {
    fail("cannot translate contentBlockDelta: missing delta or not one member", out);
    return;
  }
  const json::object& delta = d->get_object();
  drift_.fields(delta, wire::known::kDelta);
  const auto& member = *delta.begin();
  const std::string_view key(member.key().data(), member.key().size());
  const json::value& value = member.value();
  if (key == "text" && value.is_string()) {
    if (Block* b = block_for(o, BlockKind::kText, "a text delta", out)) {
      emit(ir::StreamEventKind::kTextDelta, value.get_string(), b->tool_index, out);
    }
    return;
  }
  if (key == "reasoningContent" && value.is_object()) {
    const json::object& r = value.get_object();
    drift_.fields(r, wire::known::kReasoningDelta);
    Block* b = block_for(o, BlockKind::kReasoning, "a reasoning delta", out);
    if (b == nullptr) {
      return;
    }
    if (auto text = wire::string_at(r, "text")) {
      emit(ir::StreamEventKind::kReasoningDelta, *text, 0, out);
    } else if (auto signature = wire::string_at(r, "signature")) {
      emit(ir::StreamEventKind::kReasoningSignature, *signature, 0, out);
    } else if (auto data = wire::string_at(r, "redactedContent")) {
      emit(ir::StreamEventKind::kRedactedReasoning, *data, 0, out);
    } else {
      fail(
          "cannot translate a reasoningContent delta without text, signature or "
          "redactedContent",
          out);
    }
    return;
  }
  if (key == "toolUse" && value.is_object()) {
    auto input = wire::string_at(value.get_object(), "input");
    if (!input) {
      fail("cannot translate a toolUse delta without an input string", out);
      return;
    }
    if (Block* b = block_for(o, BlockKind::kTool, "a toolUse delta", out)) {
      emit(ir::StreamEventKind::kToolCallDelta, *input, b->tool_index, out);
    }
    return;
  }
  fail("cannot translate contentBlockDelta '" + std::string(key) + "'", out);
}

void StreamDecoder::on_metadata(const json::object& o, std::vector<ir::StreamEvent>& out) {
  if (const json::value* u = o.if_contains("usage"); u != nullptr && !u->is_null()) {
    auto converted = wire::merge_usage(*u, wire_usage_, drift_);
    if (!converted) {
      fail(std::move(converted).error(), out);
      return;
    }
    usage_ = *converted;
    ir::StreamEvent e = make(ir::StreamEventKind::kUsage);
    e.usage = usage_;
    out.push_back(std::move(e));
  }
  usage_seen_ = true;
  if (stopped_) {
    finish(out);
  }
}

void StreamDecoder::finish(std::vector<ir::StreamEvent>& out) {
  ir::StreamEvent e = make(ir::StreamEventKind::kFinish);
  e.finish = finish_;
  if (finish_ == ir::FinishReason::kStopSequence) {
    e.text = stop_sequence_;
  }
  out.push_back(std::move(e));
  out.push_back(make(ir::StreamEventKind::kDone));
  finished_ = true;
}

}  // namespace sluice::protocol::bedrock_converse
