#include "protocol/gemini/stream_encoder.h"

#include "codec/json_writer.h"
#include "protocol/gemini/conventions.h"
#include "protocol/gemini/errors.h"
#include "protocol/gemini/wire_json.h"

namespace sluice::protocol::gemini {
namespace json = boost::json;

namespace {

constexpr std::string_view kEnd = "\r\n\r\n";

}  // namespace

void append_stream_error(const Error& error, std::string& out) {
  out.append("data: ");
  append_error_json(out, error_status(error), error.message(), error_status_name(error));
  out.append(kEnd);
}

void StreamEncoder::encode(const ir::StreamEvent& event, std::string& out) {
  if (finished_) {
    return;
  }
  switch (event.kind) {
    case ir::StreamEventKind::kStart:
      id_ = event.id;
      model_ = event.model;
      return;
    case ir::StreamEventKind::kTextDelta:
    case ir::StreamEventKind::kReasoningDelta:
      if (!event.text.empty()) {
        open_chunk(out);
        const bool thought = event.kind == ir::StreamEventKind::kReasoningDelta;
        if (thought) {
          signature_part(out);  // a signature closes the thinking before this
        }
        text_part(out, event.text, thought);
        close_chunk(out, {});
      }
      return;
    case ir::StreamEventKind::kReasoningSignature:
      if (!event.text.empty()) {
        if (!signature_.empty()) {
          open_chunk(out);
          signature_part(out);
          close_chunk(out, {});
        }
        signature_ = event.text;
      }
      return;
    case ir::StreamEventKind::kRedactedReasoning:
      ++dropped_events_;
      return;
    case ir::StreamEventKind::kToolCallStart: {
      if (find(event.index) != nullptr) {
        fail(Error(ErrorKind::kUpstreamProtocol,
                   "tool call " + std::to_string(event.index) + " started twice"),
             out);
        return;
      }
      ToolCall call;
      call.index = event.index;
      call.id = event.id;
      call.name = event.name;
      calls_.push_back(std::move(call));
      return;
    }
    case ir::StreamEventKind::kToolCallDelta: {
      ToolCall* call = find(event.index);
      if (call == nullptr || call->written) {
        if (call != nullptr && event.text.find_first_not_of(" \t\r\n") == std::string::npos) {
          return;
        }
        fail(Error(ErrorKind::kUpstreamProtocol,
                   "arguments for tool call " + std::to_string(event.index) +
                       (call == nullptr ? " arrived before the call started"
                                        : " arrived after the call was written")),
             out);
        return;
      }
      call->arguments.append(event.text);
      call->scan.feed(event.text);
      if (call->scan.complete()) {
        std::string chunk;
        bool any = false;
        open_chunk(chunk);
        if (!flush_calls(chunk, false, any)) {
          fail(*error_, out);
          return;
        }
        if (any) {
          close_chunk(chunk, {});
          out.append(chunk);
        }
      }
      return;
    }
    case ir::StreamEventKind::kUsage: {
      bool clamped = false;
      (void)to_wire_usage(event.usage, clamped);
      usage_clamped_ += clamped ? 1 : 0;
      usage_ = event.usage;
      return;
    }
    case ir::StreamEventKind::kFinish:
      finish_ = event.finish;
      return;
    case ir::StreamEventKind::kError:
      fail(event.error, out);
      return;
    case ir::StreamEventKind::kDone: {
      std::string chunk;
      open_chunk(chunk);
      bool any = false;
      if (!flush_calls(chunk, true, any)) {
        fail(*error_, out);
        return;
      }
      signature_part(chunk);
      if (parts_in_chunk_ == 0) {
        text_part(chunk, "", false);
      }
      if (!usage_) {
        usage_ = ir::Usage{};
      }
      close_chunk(chunk, finish_reason_name(finish_));
      out.append(chunk);
      finished_ = true;
      return;
    }
  }
}

void StreamEncoder::open_chunk(std::string& out) {
  out.append(R"(data: {"candidates":[{"content":{"parts":[)");
  parts_in_chunk_ = 0;
}

void StreamEncoder::close_chunk(std::string& out, std::string_view finish) {
  codec::JsonWriter w(out);
  w.raw(R"(],"role":"model"})");
  if (!finish.empty()) {
    w.raw(R"(,"finishReason":)").string(finish);
  }
  w.raw(R"(,"index":0}])");
  if (usage_) {
    bool clamped = false;
    w.raw(R"(,"usageMetadata":)");
    append_usage_json(out, to_wire_usage(*usage_, clamped));
  }
  w.raw(R"(,"modelVersion":)").string(model_);
  if (!id_.empty()) {
    w.raw(R"(,"responseId":)").string(id_);
  }
  w.ch('}');
  out.append(kEnd);
}

void StreamEncoder::text_part(std::string& out, std::string_view text, bool thought) {
  codec::JsonWriter w(out);
  w.raw(parts_in_chunk_++ > 0 ? "," : "").raw(R"({"text":)").string(text);
  if (thought) {
    w.raw(R"(,"thought":true)");
  } else if (!signature_.empty()) {
    w.raw(R"(,"thoughtSignature":)").string(signature_);
    signature_.clear();
  }
  w.ch('}');
}

bool StreamEncoder::signature_part(std::string& out) {
  if (signature_.empty()) {
    return false;
  }
  codec::JsonWriter w(out);
  w.raw(parts_in_chunk_++ > 0 ? "," : "")
      .raw(R"({"text":"","thought":true,"thoughtSignature":)")
      .string(signature_)
      .ch('}');
  signature_.clear();
  return true;
}

bool StreamEncoder::flush_calls(std::string& out, bool all, bool& any) {
  for (ToolCall& call : calls_) {
    if (call.written) {
      continue;
    }
    if (!all && !call.scan.complete()) {
      return true;  // later calls wait behind this one: calls keep their order
    }
    const std::string_view args =
        call.arguments.empty() ? std::string_view("{}") : std::string_view(call.arguments);
    if (!wire::is_json_object(args)) {
      error_ = Error(ErrorKind::kUpstreamProtocol,
                     "tool call '" + call.name +
                         "' has arguments that are not a JSON object; a Gemini functionCall "
                         "takes an object");
      return false;
    }
    codec::JsonWriter w(out);
    w.raw(parts_in_chunk_++ > 0 ? "," : "")
        .raw(R"({"functionCall":{"name":)")
        .string(call.name)
        .raw(R"(,"args":)")
        .raw(args);
    if (!call.id.empty()) {
      w.raw(R"(,"id":)").string(call.id);
    }
    w.ch('}');
    if (!signature_.empty()) {
      w.raw(R"(,"thoughtSignature":)").string(signature_);
      signature_.clear();
    }
    w.ch('}');
    call.written = true;
    std::string().swap(call.arguments);
    any = true;
  }
  return true;
}

StreamEncoder::ToolCall* StreamEncoder::find(std::uint32_t index) {
  for (ToolCall& call : calls_) {
    if (call.index == index) {
      return &call;
    }
  }
  return nullptr;
}

void StreamEncoder::fail(const Error& error, std::string& out) {
  append_stream_error(error, out);
  error_ = error;
  finished_ = true;
}

}  // namespace sluice::protocol::gemini
