#include "protocol/openai_responses/stream_decoder.h"

#include "codec/json_read.h"
#include "protocol/openai_responses/conventions.h"
#include "protocol/openai_responses/errors.h"

namespace sluice::protocol::openai_responses {
namespace json = boost::json;

namespace {

// The event types the decoder knows: those it translates, then those that carry nothing the
// IR needs once the items they belong to are tracked. Others are schema drift, skipped.
bool known_event(std::string_view type) {
  static constexpr std::string_view kKnown[] = {
      "response.created",
      "response.output_text.delta",
      "response.refusal.delta",
      "response.function_call_arguments.delta",
      "response.function_call_arguments.done",
      "response.reasoning_summary_text.delta",
      "response.reasoning_text.delta",
      "response.reasoning_summary_part.added",
      "response.content_part.added",
      "response.output_item.added",
      "response.output_item.done",
      "response.completed",
      "response.incomplete",
      "response.failed",
      "error",
      // nothing to translate:
      "response.in_progress",
      "response.queued",
      "response.content_part.done",
      "response.output_text.done",
      "response.refusal.done",
      "response.reasoning_summary_part.done",
      "response.reasoning_summary_text.done",
      "response.reasoning_text.done",
      "keepalive",
  };
  return Drift::is_known(type, kKnown);
}

// Known event types carrying what the IR cannot carry (audio, annotations): explicit errors.
// Built-in tools' events (response.web_search_call.*, ...) follow their output items, which
// are errors already.
bool untranslatable(std::string_view type) {
  return type.starts_with("response.audio") || type.starts_with("response.output_text.annotation");
}

// The joined text of the `key` strings of the objects in the array at `array_key` (a message's
// output_text parts, a reasoning item's summary), separated by `separator`.
std::string joined(const json::object& item, std::string_view array_key, std::string_view key,
                   std::string_view separator) {
  std::string out;
  const json::value* a = item.if_contains(array_key);
  if (a == nullptr || !a->is_array()) {
    return out;
  }
  bool first = true;
  for (const json::value& v : a->get_array()) {
    const json::object* o = v.if_object();
    if (auto text = o != nullptr ? string_at(*o, key) : std::nullopt) {
      if (!first) {
        out.append(separator);
      }
      out.append(*text);
      first = false;
    }
  }
  return out;
}

}  // namespace

void StreamDecoder::on_event(const codec::SseEvent& event, std::vector<ir::StreamEvent>& out) {
  if (!event.has_data) {
    return;
  }
  decode(event.event, event.data, out);
}

void StreamDecoder::decode(std::string_view event_name, std::string_view data,
                           std::vector<ir::StreamEvent>& out) {
  if (finished_) {
    return;
  }
  parse_event(event_name, data, out, [&](const json::object& o) {
    std::string_view type = event_name;
    if (type.empty()) {
      type = string_at(o, "type").value_or("");
    }
    dispatch(type, o, out);
  });
}

void StreamDecoder::on_end(std::vector<ir::StreamEvent>& out) {
  if (!finished_) {
    fail("upstream stream ended before response.completed", out);
  }
}

void StreamDecoder::dispatch(std::string_view type, const json::object& o,
                             std::vector<ir::StreamEvent>& out) {
  if (type == "error") {
    const json::value* nested = o.if_contains("error");
    fail(error_from_wire(nested != nullptr && nested->is_object() ? nested->get_object() : o), out);
    return;
  }
  if (type == "keepalive") {
    return;
  }
  if (!known_event(type) && !untranslatable(type)) {
    // A new event type: schema drift, skipped (the OpenAI SDKs pass unknown events through).
    drift_.unknown(type);
    return;
  }
  drift_.fields(o, known::kEvent);
  if (!started_) {
    // ir/stream_event.h promises kStart first: only the response's own lifecycle events can
    // start a stream.
    const bool lifecycle =
        type == "response.created" || type == "response.in_progress" || type == "response.queued";
    const json::value* r = o.if_contains("response");
    if (!lifecycle || r == nullptr || !r->is_object()) {
      fail("cannot translate " + std::string(type) + " before response.created", out);
      return;
    }
    started_ = true;
    drift_.fields(r->get_object(), known::kResponse);
    ir::StreamEvent start;
    start.kind = ir::StreamEventKind::kStart;
    start.id.assign(string_at(r->get_object(), "id").value_or(""));
    start.model.assign(string_at(r->get_object(), "model").value_or(""));
    out.push_back(std::move(start));
    return;
  }
  if (type == "response.output_text.delta" || type == "response.refusal.delta") {
    on_delta(o, ItemKind::kMessage, ir::StreamEventKind::kTextDelta, out);
  } else if (type == "response.function_call_arguments.delta") {
    on_delta(o, ItemKind::kFunctionCall, ir::StreamEventKind::kToolCallDelta, out);
  } else if (type == "response.reasoning_summary_text.delta" ||
             type == "response.reasoning_text.delta") {
    on_delta(o, ItemKind::kReasoning, ir::StreamEventKind::kReasoningDelta, out);
  } else if (type == "response.reasoning_summary_part.added") {
    if (Item* item = item_at(o, ItemKind::kReasoning, type, out)) {
      if (item->summary_parts++ > 0) {
        emit(ir::StreamEventKind::kReasoningDelta, "\n\n", 0, out);
      }
    }
  } else if (type == "response.content_part.added") {
    const json::value* part = o.if_contains("part");
    const std::string_view part_type = part != nullptr && part->is_object()
                                           ? string_at(part->get_object(), "type").value_or("")
                                           : std::string_view();
    const ItemKind kind = part_type == "reasoning_text" ? ItemKind::kReasoning : ItemKind::kMessage;
    if (part_type != "output_text" && part_type != "refusal" && part_type != "reasoning_text") {
      fail("cannot translate content of type '" + std::string(part_type) + "'", out);
    } else if (Item* item = item_at(o, kind, type, out); item != nullptr && part->is_object()) {
      drift_.fields(part->get_object(), known::kPart);
      // A part that arrives with text (the API sends them empty) is passed on whole.
      const std::string_view text =
          string_at(part->get_object(), part_type == "refusal" ? "refusal" : "text").value_or("");
      if (!text.empty()) {
        item->streamed = true;
        emit(kind == ItemKind::kReasoning ? ir::StreamEventKind::kReasoningDelta
                                          : ir::StreamEventKind::kTextDelta,
             text, 0, out);
      }
    }
  } else if (type == "response.output_item.added") {
    on_item_added(o, out);
  } else if (type == "response.output_item.done") {
    on_item_done(o, out);
  } else if (type == "response.function_call_arguments.done") {
    if (Item* item = item_at(o, ItemKind::kFunctionCall, type, out); item && !item->streamed) {
      item->streamed = true;
      emit(ir::StreamEventKind::kToolCallDelta, string_at(o, "arguments").value_or(""),
           item->tool_index, out);
    }
  } else if (type == "response.completed" || type == "response.incomplete") {
    on_final(o, out);
  } else if (type == "response.failed") {
    const json::value* r = o.if_contains("response");
    const json::value* e =
        r != nullptr && r->is_object() ? r->get_object().if_contains("error") : nullptr;
    if (e != nullptr && e->is_object()) {
      fail(error_from_wire(e->get_object()), out);
    } else {
      fail(Error(ErrorKind::kUpstreamStatus, 502, "the upstream response failed")
               .with_code("response_failed"),
           out);
    }
  } else if (type == "response.created") {
    fail("cannot translate a second response.created", out);
  } else if (untranslatable(type)) {
    fail("cannot translate event '" + std::string(type) + "'", out);
  }
}

void StreamDecoder::on_item_added(const json::object& o, std::vector<ir::StreamEvent>& out) {
  const json::value* index = o.if_contains("output_index");
  const auto at = index != nullptr ? codec::as_count(*index) : std::nullopt;
  const json::value* iv = o.if_contains("item");
  if (!at || *at >= kMaxItems || iv == nullptr || !iv->is_object()) {
    fail(
        "cannot translate response.output_item.added: missing or out-of-range output_index or "
        "item",
        out);
    return;
  }
  if (*at < items_.size() && items_[*at].kind != ItemKind::kNone) {
    fail("cannot translate response.output_item.added: output_index " + std::to_string(*at) +
             " added twice",
         out);
    return;
  }
  if (*at >= items_.size()) {
    items_.resize(*at + 1);
  }
  const json::object& item = iv->get_object();
  const std::string_view type = string_at(item, "type").value_or("");
  if (type == "message" || type == "reasoning" || type == "function_call") {
    drift_.fields(item, known::kItem);
  }
  Item& slot = items_[*at];
  if (type == "message") {
    slot.kind = ItemKind::kMessage;
  } else if (type == "reasoning") {
    slot.kind = ItemKind::kReasoning;
  } else if (type == "function_call") {
    const auto call_id = string_at(item, "call_id");
    const auto name = string_at(item, "name");
    if (!call_id || !name) {
      fail("cannot translate a function_call item without call_id and name", out);
      return;
    }
    slot.kind = ItemKind::kFunctionCall;
    slot.tool_index = tools_++;
    ir::StreamEvent start;
    start.kind = ir::StreamEventKind::kToolCallStart;
    start.index = slot.tool_index;
    start.id.assign(*call_id);
    start.name.assign(*name);
    out.push_back(std::move(start));
    const std::string_view arguments = string_at(item, "arguments").value_or("");
    if (!arguments.empty()) {
      slot.streamed = true;
      emit(ir::StreamEventKind::kToolCallDelta, arguments, slot.tool_index, out);
    }
  } else {
    fail("cannot translate output item '" + std::string(type) + "'", out);
  }
}

void StreamDecoder::on_item_done(const json::object& o, std::vector<ir::StreamEvent>& out) {
  const json::value* iv = o.if_contains("item");
  const std::string_view type = iv != nullptr && iv->is_object()
                                    ? string_at(iv->get_object(), "type").value_or("")
                                    : std::string_view();
  const ItemKind kind = type == "message"         ? ItemKind::kMessage
                        : type == "function_call" ? ItemKind::kFunctionCall
                        : type == "reasoning"     ? ItemKind::kReasoning
                                                  : ItemKind::kNone;
  if (kind == ItemKind::kNone) {
    fail("cannot translate output item '" + std::string(type) + "'", out);
    return;
  }
  Item* item = item_at(o, kind, "response.output_item.done", out);
  if (item == nullptr) {
    return;
  }
  const json::object& done = iv->get_object();
  drift_.fields(done, known::kItem);
  if (kind == ItemKind::kFunctionCall) {
    if (!item->streamed) {
      emit(ir::StreamEventKind::kToolCallDelta, string_at(done, "arguments").value_or(""),
           item->tool_index, out);
    }
  } else if (kind == ItemKind::kMessage) {
    if (!item->streamed) {
      emit(ir::StreamEventKind::kTextDelta, joined(done, "content", "text", ""), 0, out);
    }
  } else {
    if (!item->streamed) {
      const std::string summary = joined(done, "summary", "text", "\n\n");
      item->summary_parts += summary.empty() ? 0 : 1;
      emit(ir::StreamEventKind::kReasoningDelta, summary, 0, out);
    }
    if (auto encrypted = string_at(done, "encrypted_content"); encrypted && !encrypted->empty()) {
      emit(item->summary_parts > 0 ? ir::StreamEventKind::kReasoningSignature
                                   : ir::StreamEventKind::kRedactedReasoning,
           *encrypted, 0, out);
    }
  }
  item->streamed = true;
}

void StreamDecoder::on_delta(const json::object& o, ItemKind kind, ir::StreamEventKind event,
                             std::vector<ir::StreamEvent>& out) {
  Item* item = item_at(o, kind, "delta", out);
  if (item == nullptr) {
    return;
  }
  const auto delta = string_at(o, "delta");
  if (!delta) {
    fail("cannot translate a delta event without a string delta", out);
    return;
  }
  item->streamed = true;
  emit(event, *delta, item->tool_index, out);
}

void StreamDecoder::on_final(const json::object& o, std::vector<ir::StreamEvent>& out) {
  const json::value* r = o.if_contains("response");
  if (r == nullptr || !r->is_object()) {
    fail("cannot translate a final event without its response object", out);
    return;
  }
  const json::object& response = r->get_object();
  drift_.fields(response, known::kResponse);
  if (const json::value* u = response.if_contains("usage"); u != nullptr && !u->is_null()) {
    auto usage = read_usage(*u);
    if (!usage) {
      fail(std::move(usage).error(), out);
      return;
    }
    drift_.fields(u->get_object(), known::kUsage);
    ir::StreamEvent e;
    e.kind = ir::StreamEventKind::kUsage;
    e.usage = *usage;
    out.push_back(std::move(e));
  }
  std::string_view reason;
  if (const json::value* d = response.if_contains("incomplete_details");
      d != nullptr && d->is_object()) {
    reason = string_at(d->get_object(), "reason").value_or("");
  }
  ir::StreamEvent finish;
  finish.kind = ir::StreamEventKind::kFinish;
  finish.finish =
      finish_from_status(string_at(response, "status").value_or("completed"), reason, tools_ > 0);
  out.push_back(std::move(finish));
  ir::StreamEvent done;
  done.kind = ir::StreamEventKind::kDone;
  out.push_back(std::move(done));
  answered_ = true;
  finished_ = true;
}

StreamDecoder::Item* StreamDecoder::item_at(const json::object& o, ItemKind kind,
                                            std::string_view what,
                                            std::vector<ir::StreamEvent>& out) {
  const json::value* index = o.if_contains("output_index");
  const auto at = index != nullptr ? codec::as_count(*index) : std::nullopt;
  if (!at || *at >= items_.size() || items_[*at].kind != kind) {
    fail("cannot translate " + std::string(what) + ": unknown output_index or item of another type",
         out);
    return nullptr;
  }
  return &items_[*at];
}

}  // namespace sluice::protocol::openai_responses
