#include "protocol/openai_chat/stream_encoder.h"

#include <string>

#include "codec/json_writer.h"
#include "codec/sse.h"
#include "protocol/openai_chat/conventions.h"
#include "protocol/openai_chat/errors.h"
#include "protocol/openai_chat/response.h"

namespace sluice::protocol::openai_chat {

namespace {

constexpr std::string_view kUsageNull = R"(,"usage":null)";
constexpr std::string_view kEndEvent = "}\n\n";

Error out_of_order(std::string message) {
  return Error(ErrorKind::kUpstreamProtocol, std::move(message));
}

}  // namespace

StreamEncoder::StreamEncoder(bool include_usage, std::int64_t created)
    : include_usage_(include_usage), created_(created) {}

void StreamEncoder::encode(const ir::StreamEvent& event, std::string& out) {
  if (finished_) {
    return;
  }
  switch (event.kind) {
    case ir::StreamEventKind::kStart:
      if (!started_) {
        id_ = event.id;
        model_ = event.model;
        start(out);
      }
      return;
    case ir::StreamEventKind::kTextDelta:
    case ir::StreamEventKind::kReasoningDelta: {
      if (event.text.empty() || !ready_for_content(out)) {
        return;
      }
      begin_chunk(out);
      codec::JsonWriter w(out);
      w.raw(event.kind == ir::StreamEventKind::kTextDelta ? R"({"content":)"
                                                          : R"({"reasoning_content":)")
          .string(event.text)
          .ch('}');
      end_chunk(out);
      return;
    }
    case ir::StreamEventKind::kReasoningSignature:
    case ir::StreamEventKind::kRedactedReasoning:
      ++dropped_;
      return;
    case ir::StreamEventKind::kToolCallStart:
      if (ready_for_content(out)) {
        on_tool_start(event, out);
      }
      return;
    case ir::StreamEventKind::kToolCallDelta:
      if (!event.text.empty() && ready_for_content(out)) {
        on_tool_delta(event, out);
      }
      return;
    case ir::StreamEventKind::kUsage:
      usage_ = event.usage;
      has_usage_ = true;
      return;
    case ir::StreamEventKind::kFinish:
      start(out);
      if (!finish_written_) {
        write_finish(out, event.finish);
      }
      return;
    case ir::StreamEventKind::kError:
      fail(event.error, out);
      return;
    case ir::StreamEventKind::kDone:
      finish_stream(out);
      return;
  }
}

void StreamEncoder::start(std::string& out) {
  if (started_) {
    return;
  }
  started_ = true;
  const std::string id = completion_id(id_);
  id_ = id;
  head_.reserve(96 + id.size() + model_.size());
  codec::JsonWriter h(head_);
  h.raw(R"(data: {"id":)")
      .string(id)
      .raw(R"(,"object":"chat.completion.chunk","created":)")
      .number(created_)
      .raw(R"(,"model":)")
      .string(model_)
      .raw(R"(,"choices":[)");
  tail_ = R"(,"logprobs":null,"finish_reason":null}])";
  if (include_usage_) {
    tail_.append(kUsageNull);
  }
  tail_.append(kEndEvent);

  begin_chunk(out);
  out.append(R"({"role":"assistant","content":""})");
  end_chunk(out);
}

void StreamEncoder::begin_chunk(std::string& out) const {
  out.append(head_).append(R"({"index":0,"delta":)");
}

bool StreamEncoder::ready_for_content(std::string& out) {
  start(out);
  if (finish_written_) {
    fail(out_of_order("model output after the finish reason cannot be expressed in a "
                      "chat.completion.chunk stream"),
         out);
    return false;
  }
  return true;
}

void StreamEncoder::write_finish(std::string& out, ir::FinishReason finish) {
  begin_chunk(out);
  codec::JsonWriter w(out);
  w.raw(R"({},"logprobs":null,"finish_reason":)").string(finish_reason_to_openai(finish)).raw("}]");
  if (include_usage_) {
    out.append(kUsageNull);
  }
  out.append(kEndEvent);
  finish_written_ = true;
}

void StreamEncoder::on_tool_start(const ir::StreamEvent& event, std::string& out) {
  if (event.index != tools_) {
    fail(out_of_order("tool call " + std::to_string(event.index) +
                      " started out of order (expected tool call " + std::to_string(tools_) + ")"),
         out);
    return;
  }
  ++tools_;
  begin_chunk(out);
  codec::JsonWriter w(out);
  w.raw(R"({"tool_calls":[{"index":)").number(std::uint64_t{event.index}).raw(R"(,"id":)");
  if (event.id.empty()) {
    w.string(id_ + "_call_" + std::to_string(event.index));
  } else {
    w.string(event.id);
  }
  w.raw(R"(,"type":"function","function":{"name":)")
      .string(event.name)
      .raw(R"(,"arguments":""}}]})");
  end_chunk(out);
}

void StreamEncoder::on_tool_delta(const ir::StreamEvent& event, std::string& out) {
  if (event.index >= tools_) {
    fail(out_of_order("arguments for tool call " + std::to_string(event.index) +
                      " arrived before the call started"),
         out);
    return;
  }
  begin_chunk(out);
  codec::JsonWriter w(out);
  w.raw(R"({"tool_calls":[{"index":)")
      .number(std::uint64_t{event.index})
      .raw(R"(,"function":{"arguments":)")
      .string(event.text)
      .raw("}}]}");
  end_chunk(out);
}

void StreamEncoder::finish_stream(std::string& out) {
  start(out);
  if (!finish_written_) {
    write_finish(out, ir::FinishReason::kUnset);
  }
  if (include_usage_ && has_usage_) {
    out.append(head_).push_back(']');
    out.append(R"(,"usage":)");
    append_usage_json(out, usage_);
    out.append(kEndEvent);
  }
  out.append("data: [DONE]\n\n");
  finished_ = true;
}

void StreamEncoder::fail(const Error& error, std::string& out) {
  codec::append_data_event(out, encode_error(error));
  error_ = error;
  finished_ = true;
}

}  // namespace sluice::protocol::openai_chat
