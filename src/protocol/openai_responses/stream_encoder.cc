#include "protocol/openai_responses/stream_encoder.h"

#include <algorithm>

#include "codec/json_writer.h"
#include "protocol/openai_responses/conventions.h"
#include "protocol/openai_responses/errors.h"
#include "protocol/openai_responses/response.h"

namespace sluice::protocol::openai_responses {

namespace {

Error out_of_order(std::string message) {
  return Error(ErrorKind::kUpstreamProtocol, std::move(message));
}

}  // namespace

void append_error_event(std::string& out, const Error& error, std::int64_t sequence_number) {
  codec::JsonWriter w(out);
  const std::string_view code =
      error.code().empty() ? to_string(error.kind()) : std::string_view(error.code());
  auto param = [&] { error.param().empty() ? w.null() : w.string(error.param()); };
  w.raw("event: error\ndata: {\"type\":\"error\",\"code\":").string(code);
  w.raw(R"(,"message":)").string(error.message()).raw(R"(,"param":)");
  param();
  w.raw(R"(,"error":{"type":)").string(error_type(error)).raw(R"(,"code":)").string(code);
  w.raw(R"(,"message":)").string(error.message()).raw(R"(,"param":)");
  param();
  w.ch('}');
  if (sequence_number >= 0) {
    w.raw(R"(,"sequence_number":)").number(sequence_number);
  }
  w.raw("}\n\n");
}

StreamEncoder::StreamEncoder(std::int64_t created, ToolNames names)
    : created_(created), names_(std::move(names)) {}

void StreamEncoder::encode(const ir::StreamEvent& event, std::string& out) {
  if (finished_) {
    return;
  }
  switch (event.kind) {
    case ir::StreamEventKind::kStart:
      if (!started_) {
        id_ = openai_responses::response_id(event.id);
        model_ = event.model;
        start(out);
      }
      return;
    case ir::StreamEventKind::kTextDelta:
      on_text(event, out);
      return;
    case ir::StreamEventKind::kReasoningDelta:
      on_reasoning(event, out);
      return;
    case ir::StreamEventKind::kReasoningSignature:
      on_signature(event, out);
      return;
    case ir::StreamEventKind::kRedactedReasoning:
      on_redacted(event, out);
      return;
    case ir::StreamEventKind::kToolCallStart:
      on_tool_start(event, out);
      return;
    case ir::StreamEventKind::kToolCallDelta:
      on_tool_delta(event, out);
      return;
    case ir::StreamEventKind::kUsage:
      usage_ = event.usage;
      has_usage_ = true;
      return;
    case ir::StreamEventKind::kFinish:
      if (!finish_seen_) {
        finish_ = event.finish;
        finish_seen_ = true;
      }
      return;
    case ir::StreamEventKind::kError:
      fail(event.error, out);
      return;
    case ir::StreamEventKind::kDone:
      finish(out);
      return;
  }
}

void StreamEncoder::begin_event(std::string& out, std::string_view type) {
  out.append("event: ").append(type).append("\ndata: {\"type\":\"").append(type).push_back('"');
}

void StreamEncoder::end_event(std::string& out) {
  codec::JsonWriter(out).raw(R"(,"sequence_number":)").number(sequence_++).raw("}\n\n");
}

void StreamEncoder::item_fields(std::string& out, std::size_t index) {
  out.append(items_[index].fields);
}

// The item as output_item.added (`done` false: in progress, no content yet) or
// output_item.done and the final response (`done`) carry it.
void StreamEncoder::write_item(std::string& out, std::size_t index, bool done) {
  const Item& item = items_[index];
  codec::JsonWriter w(out);
  switch (item.kind) {
    case Kind::kMessage:
      w.raw(R"({"id":)").string(item.id).raw(R"(,"type":"message","status":)");
      w.string(done ? "completed" : "in_progress").raw(R"(,"content":[)");
      if (done) {
        write_output_text(w, item.text);
      }
      w.raw(R"(],"role":"assistant"})");
      return;
    case Kind::kFunctionCall:
      if (done) {
        write_function_call_item(w, item.id, "completed", item.text, item.call_id, item.name,
                                 item.space);
      } else {
        write_function_call_item(w, item.id, "in_progress", std::string_view(), item.call_id,
                                 item.name, item.space);
      }
      return;
    case Kind::kCustomToolCall:
      write_custom_tool_call_item(w, item.id, done ? "completed" : "in_progress",
                                  done ? std::string_view(item.input) : std::string_view(),
                                  item.call_id, item.name, item.space);
      return;
    case Kind::kReasoning:
      w.raw(R"({"id":)").string(item.id).raw(R"(,"type":"reasoning","summary":[)");
      if (done && item.summary_part) {
        w.raw(R"({"type":"summary_text","text":)").string(item.text).ch('}');
      }
      w.ch(']');
      if (!item.encrypted.empty()) {
        w.raw(R"(,"encrypted_content":)").string(item.encrypted);
      }
      w.ch('}');
      return;
  }
}

void StreamEncoder::start(std::string& out) {
  if (started_) {
    return;
  }
  started_ = true;
  if (id_.empty()) {
    id_ = openai_responses::response_id("gateway");
  }
  write_response(out, "response.created", "", false);
  write_response(out, "response.in_progress", "", false);
}

// Starts the stream when needed; false (and the stream failed) once the final answer is known.
bool StreamEncoder::ready(std::string& out) {
  start(out);
  if (finish_seen_) {
    fail(out_of_order("model output after the finish reason cannot be expressed in a Responses "
                      "stream"),
         out);
    return false;
  }
  return true;
}

std::size_t StreamEncoder::open_item(std::string& out, Kind kind) {
  close_open(out);
  const std::size_t index = items_.size();
  Item& item = items_.emplace_back();
  item.kind = kind;
  item.id = item_id(kind == Kind::kMessage          ? "msg"
                    : kind == Kind::kReasoning      ? "rs"
                    : kind == Kind::kCustomToolCall ? "ctc"
                                                    : "fc",
                    id_, index);
  codec::JsonWriter(item.fields)
      .raw(R"(,"item_id":)")
      .string(item.id)
      .raw(R"(,"output_index":)")
      .number(static_cast<std::uint64_t>(index));
  return index;
}

void StreamEncoder::close_item(std::string& out, std::size_t index) {
  Item& item = items_[index];
  if (item.closed) {
    return;
  }
  item.closed = true;
  codec::JsonWriter w(out);
  switch (item.kind) {
    case Kind::kMessage:
      begin_event(out, "response.output_text.done");
      item_fields(out, index);
      w.raw(R"(,"content_index":0,"text":)").string(item.text).raw(R"(,"logprobs":[])");
      end_event(out);
      begin_event(out, "response.content_part.done");
      item_fields(out, index);
      w.raw(R"(,"content_index":0,"part":)");
      write_output_text(w, item.text);
      end_event(out);
      break;
    case Kind::kReasoning:
      if (item.summary_part) {
        begin_event(out, "response.reasoning_summary_text.done");
        item_fields(out, index);
        w.raw(R"(,"summary_index":0,"text":)").string(item.text);
        end_event(out);
        begin_event(out, "response.reasoning_summary_part.done");
        item_fields(out, index);
        w.raw(R"(,"summary_index":0,"part":{"type":"summary_text","text":)")
            .string(item.text)
            .ch('}');
        end_event(out);
      }
      break;
    case Kind::kFunctionCall:
      begin_event(out, "response.function_call_arguments.done");
      item_fields(out, index);
      w.raw(R"(,"name":)").string(item.name).raw(R"(,"arguments":)").string(item.text);
      end_event(out);
      break;
    case Kind::kCustomToolCall:
      item.input = custom_tool_input(item.text.text());
      if (!item.input.empty()) {
        begin_event(out, "response.custom_tool_call_input.delta");
        item_fields(out, index);
        w.raw(R"(,"delta":)").string(item.input);
        end_event(out);
      }
      begin_event(out, "response.custom_tool_call_input.done");
      item_fields(out, index);
      w.raw(R"(,"input":)").string(item.input);
      end_event(out);
      break;
  }
  begin_event(out, "response.output_item.done");
  w.raw(R"(,"output_index":)").number(static_cast<std::uint64_t>(index)).raw(R"(,"item":)");
  write_item(out, index, true);
  end_event(out);
}

void StreamEncoder::close_open(std::string& out) {
  if (open_ != kNone) {
    close_item(out, open_);
    open_ = kNone;
  }
}

void StreamEncoder::on_text(const ir::StreamEvent& event, std::string& out) {
  if (event.text.empty() || !ready(out)) {
    return;
  }
  codec::JsonWriter w(out);
  if (open_ == kNone || items_[open_].kind != Kind::kMessage) {
    open_ = open_item(out, Kind::kMessage);
    begin_event(out, "response.output_item.added");
    w.raw(R"(,"output_index":)").number(static_cast<std::uint64_t>(open_)).raw(R"(,"item":)");
    write_item(out, open_, false);
    end_event(out);
    begin_event(out, "response.content_part.added");
    item_fields(out, open_);
    w.raw(R"(,"content_index":0,"part":)");
    write_output_text(w, "");
    end_event(out);
  }
  begin_event(out, "response.output_text.delta");
  item_fields(out, open_);
  w.raw(R"(,"content_index":0,"delta":")").raw(items_[open_].text.append(event.text));
  w.raw(R"(","logprobs":[])");
  end_event(out);
}

void StreamEncoder::on_reasoning(const ir::StreamEvent& event, std::string& out) {
  if (event.text.empty() || !ready(out)) {
    return;
  }
  codec::JsonWriter w(out);
  if (open_ == kNone || items_[open_].kind != Kind::kReasoning ||
      !items_[open_].encrypted.empty()) {
    open_ = open_item(out, Kind::kReasoning);
    begin_event(out, "response.output_item.added");
    w.raw(R"(,"output_index":)").number(static_cast<std::uint64_t>(open_)).raw(R"(,"item":)");
    write_item(out, open_, false);
    end_event(out);
  }
  Item& item = items_[open_];
  if (!item.summary_part) {
    item.summary_part = true;
    begin_event(out, "response.reasoning_summary_part.added");
    item_fields(out, open_);
    w.raw(R"(,"summary_index":0,"part":{"type":"summary_text","text":""})");
    end_event(out);
  }
  begin_event(out, "response.reasoning_summary_text.delta");
  item_fields(out, open_);
  w.raw(R"(,"summary_index":0,"delta":")").raw(item.text.append(event.text)).ch('"');
  end_event(out);
}

void StreamEncoder::on_signature(const ir::StreamEvent& event, std::string& out) {
  if (event.text.empty() || !ready(out)) {
    return;
  }
  if (open_ == kNone || items_[open_].kind != Kind::kReasoning) {
    on_redacted(event, out);  // a signature with no reasoning text: the item is all signature
    return;
  }
  // Written with the item's output_item.done; a later delta opens a new item.
  items_[open_].encrypted = event.text;
}

void StreamEncoder::on_redacted(const ir::StreamEvent& event, std::string& out) {
  if (!ready(out)) {
    return;
  }
  const std::size_t index = open_item(out, Kind::kReasoning);
  items_[index].encrypted = event.text;
  begin_event(out, "response.output_item.added");
  codec::JsonWriter(out)
      .raw(R"(,"output_index":)")
      .number(static_cast<std::uint64_t>(index))
      .raw(R"(,"item":)");
  write_item(out, index, false);
  end_event(out);
  close_item(out, index);
}

void StreamEncoder::on_tool_start(const ir::StreamEvent& event, std::string& out) {
  if (!ready(out)) {
    return;
  }
  if (event.index != tools_.size()) {
    fail(out_of_order("tool call " + std::to_string(event.index) +
                      " started out of order (expected tool call " + std::to_string(tools_.size()) +
                      ")"),
         out);
    return;
  }
  const CallerTool* caller = names_.find(event.name);
  const std::size_t index = open_item(
      out, caller != nullptr && caller->custom ? Kind::kCustomToolCall : Kind::kFunctionCall);
  Item& item = items_[index];
  item.call_id = event.id.empty() ? item_id("call", id_, event.index) : event.id;
  // An upstream that repeats a call id (broken or hostile) would hand the caller two calls it
  // cannot tell apart (clients match outputs to calls by call_id): the repeat gets its own.
  auto taken = [this](std::string_view call_id) {
    return std::any_of(tools_.begin(), tools_.end(),
                       [&](std::size_t t) { return items_[t].call_id == call_id; });
  };
  if (taken(item.call_id)) {
    item.call_id = item_id("call", id_, event.index);
    while (taken(item.call_id)) {
      item.call_id += '_';
    }
  }
  item.name = caller != nullptr ? caller->name : event.name;
  if (caller != nullptr) {
    item.space = caller->space;
  }
  tools_.push_back(index);
  begin_event(out, "response.output_item.added");
  codec::JsonWriter(out)
      .raw(R"(,"output_index":)")
      .number(static_cast<std::uint64_t>(index))
      .raw(R"(,"item":)");
  write_item(out, index, false);
  end_event(out);
}

void StreamEncoder::on_tool_delta(const ir::StreamEvent& event, std::string& out) {
  if (event.text.empty() || !ready(out)) {
    return;
  }
  if (event.index >= tools_.size() || items_[tools_[event.index]].closed) {
    fail(out_of_order("arguments for tool call " + std::to_string(event.index) +
                      " arrived before the call started"),
         out);
    return;
  }
  const std::size_t index = tools_[event.index];
  if (items_[index].kind == Kind::kCustomToolCall) {
    items_[index].text.append(event.text);  // JSON around the text: written when it closes
    return;
  }
  begin_event(out, "response.function_call_arguments.delta");
  item_fields(out, index);
  codec::JsonWriter(out).raw(R"(,"delta":")").raw(items_[index].text.append(event.text)).ch('"');
  end_event(out);
}

void StreamEncoder::finish(std::string& out) {
  start(out);
  for (std::size_t i = 0; i < items_.size(); ++i) {
    close_item(out, i);
  }
  open_ = kNone;
  const std::string_view reason = incomplete_reason(finish_);
  write_response(out, reason.empty() ? "response.completed" : "response.incomplete", reason, true);
  finished_ = true;
}

// A lifecycle event carrying the whole response: in progress (no output) or final.
void StreamEncoder::write_response(std::string& out, std::string_view type, std::string_view reason,
                                   bool with_output) {
  begin_event(out, type);
  codec::JsonWriter w(out);
  w.raw(R"(,"response":)");
  std::string_view status = "in_progress";
  if (type == "response.completed") {
    status = "completed";
  } else if (type == "response.incomplete") {
    status = "incomplete";
  }
  begin_response_object(w, {.id = id_,
                            .model = model_,
                            .created = created_,
                            .status = status,
                            .incomplete_reason = reason});
  for (std::size_t i = 0; with_output && i < items_.size(); ++i) {
    if (i > 0) {
      w.ch(',');
    }
    write_item(out, i, true);
  }
  end_response_object(w, with_output && has_usage_ ? &usage_ : nullptr);
  end_event(out);
}

void StreamEncoder::fail(const Error& error, std::string& out) {
  append_error_event(out, error, static_cast<std::int64_t>(sequence_++));
  if (started_) {
    // The API follows its error event with response.failed (the recorded
    // stream-error-insufficient-quota.sse); the response carries the error.
    begin_event(out, "response.failed");
    codec::JsonWriter w(out);
    w.raw(R"(,"response":{"id":)").string(id_).raw(R"(,"object":"response","created_at":)");
    w.number(created_).raw(R"(,"status":"failed","error":{"code":)");
    w.string(error.code().empty() ? to_string(error.kind()) : std::string_view(error.code()));
    w.raw(R"(,"message":)").string(error.message()).raw(R"(},"model":)").string(model_);
    w.raw(R"(,"output":[],"usage":null})");
    end_event(out);
  }
  error_ = error;
  finished_ = true;
}

}  // namespace sluice::protocol::openai_responses
