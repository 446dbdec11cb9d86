#include "anthropic_responder.h"

#include <algorithm>

#include <boost/json.hpp>

#include "error_bodies.h"
#include "json_text.h"
#include "request_body.h"

namespace sluice::mock {
namespace {

namespace json = boost::json;

constexpr std::string_view kToolUseId = "toolu_mock_1";

Error invalid(std::string message) { return Error(ErrorKind::kBadRequest, std::move(message)); }

// The conversation ends with a tool result: the last message holds a tool_result block
// (Claude Code adds text blocks beside it).
bool ends_with_tool_result(const json::object& root) {
  const auto* messages = array_member(root, "messages");
  const auto* last = messages && !messages->empty() ? messages->back().if_object() : nullptr;
  const auto* blocks = last ? array_member(*last, "content") : nullptr;
  return blocks && std::any_of(blocks->begin(), blocks->end(), [](const json::value& b) {
           const auto* block = b.if_object();
           const auto* type = block ? string_member(*block, "type") : nullptr;
           return type && *type == "tool_result";
         });
}

std::optional<std::string> pick_tool(const json::object& root) {
  ToolChoice choice;
  if (const auto* c = object_member(root, "tool_choice")) {
    const auto* type = string_member(*c, "type");
    choice.forbidden = type && *type == "none";
    choice.required = type && *type == "any";
    if (type && *type == "tool") {
      choice.forced = name_member(*c);
    }
  }
  return choose_tool(first_tool(root, name_member), choice, ends_with_tool_result(root));
}

// The fields every message object starts with, up to "content":
// {"model":..,"id":"msg_mock_<n>","type":"message","role":"assistant","content":
void open_message(std::string& out, const AnthropicRequest& request, const ReplySpec& spec) {
  out += R"({"model":)";
  append_json_string(out, request.model);
  out += R"(,"id":"msg_mock_)";
  out += std::to_string(spec.number);
  out += R"(","type":"message","role":"assistant","content":)";
}

std::string_view stop_reason(const AnthropicRequest& request) {
  return request.tool_name ? "tool_use" : "end_turn";
}

// The input-side usage fields shared by the message usage and message_delta's usage.
void append_input_usage(std::string& out, std::uint32_t input_tokens) {
  out += R"({"input_tokens":)";
  out += std::to_string(input_tokens);
  out += R"(,"cache_creation_input_tokens":0,"cache_read_input_tokens":0)";
}

// After "content": the stop fields and the full usage object, closing the message.
void close_message(std::string& out, std::string_view stop, std::uint32_t input_tokens,
                   std::uint32_t output) {
  out += R"(,"stop_reason":)";
  if (stop.empty()) {
    out += "null";
  } else {
    append_json_string(out, stop);
  }
  out += R"(,"stop_sequence":null,"stop_details":null,"usage":)";
  append_input_usage(out, input_tokens);
  out += R"(,"cache_creation":{"ephemeral_5m_input_tokens":0,"ephemeral_1h_input_tokens":0},)"
         R"("output_tokens":)";
  out += std::to_string(output);
  out += R"(,"service_tier":"standard","inference_geo":"not_available"}})";
}

// {"type":"tool_use","id":"toolu_mock_1","name":..,"input":<input>}
void append_tool_use(std::string& out, std::string_view name, std::string_view input) {
  out += R"({"type":"tool_use","id":")";
  out += kToolUseId;
  out += R"(","name":)";
  append_json_string(out, name);
  out += R"(,"input":)";
  out += input;
  out += "}";
}

std::string_view stream_error_message(std::string_view type) {
  return type == "overloaded_error" ? "Overloaded" : "mock stream error";
}

class AnthropicStream final : public PhasedStream {
 public:
  AnthropicStream(const AnthropicRequest& request, const ReplySpec& spec)
      : request_(request), spec_(spec), fragments_(tool_argument_fragments(tool_arguments(spec_))) {
    std::uint32_t content =
        request.tool_name ? static_cast<std::uint32_t>(fragments_.size()) : spec.words;
    if (spec.stream_error) {
      set_phases(3, std::min(spec.stream_error->after.value_or(content / 2), content), 1);
    } else {
      set_phases(3, content, spec.omit_done ? 2 : 3);
    }
  }

 private:
  void prelude_event(std::uint32_t i, std::string& out) override {
    if (i == 0) {
      begin_typed_event(out, "message_start");
      out += R"(,"message":)";
      open_message(out, request_, spec_);
      out += "[]";
      close_message(out, {}, request_.input_tokens, 1);
      out += "}";
    } else if (i == 1) {
      begin_typed_event(out, "content_block_start");
      out += R"(,"index":0,"content_block":)";
      if (request_.tool_name) {
        append_tool_use(out, *request_.tool_name, "{}");
      } else {
        out += R"({"type":"text","text":""})";
      }
      out += "}";
    } else {
      // The live API writes this one payload with a space after the colon.
      out += "event: ping\ndata: {\"type\": \"ping\"}";
    }
    end_sse_event(out);
  }

  void counted_event(std::uint32_t i, std::string& out) override {
    begin_typed_event(out, "content_block_delta");
    if (request_.tool_name) {
      out += R"(,"index":0,"delta":{"type":"input_json_delta","partial_json":)";
      append_json_string(out, fragments_[i]);
    } else {
      out += R"(,"index":0,"delta":{"type":"text_delta","text":")";
      append_reply_piece(out, i + 1);
      out += '"';
    }
    out += "}}";
    end_sse_event(out);
  }

  void trailer_event(std::uint32_t i, std::string& out) override {
    if (spec_.stream_error) {
      const std::string& type = spec_.stream_error->type;
      out += "event: error\ndata: ";
      out += anthropic_error_body(type, stream_error_message(type));
    } else if (i == 0) {
      begin_typed_event(out, "content_block_stop");
      out += R"(,"index":0})";
    } else if (i == 1) {
      begin_typed_event(out, "message_delta");
      out += R"(,"delta":{"stop_reason":)";
      append_json_string(out, stop_reason(request_));
      out += R"(,"stop_sequence":null,"stop_details":null},"usage":)";
      append_input_usage(out, request_.input_tokens);
      out += R"(,"output_tokens":)";
      out += std::to_string(output_tokens(request_.tool_name.has_value(), spec_.words));
      out += "}}";
    } else {
      begin_typed_event(out, "message_stop");
      out += "}";
    }
    end_sse_event(out);
  }

  AnthropicRequest request_;
  ReplySpec spec_;
  std::array<std::string_view, 3> fragments_;  // into spec_
};

Result<AnthropicRequest> read_anthropic_request(const json::object& obj,
                                                AnthropicEndpoint endpoint) {
  AnthropicRequest out;

  const auto* model = obj.if_contains("model");
  if (!model) {
    return invalid("model: Field required");
  }
  if (!model->is_string()) {
    return invalid("model: Input should be a valid string");
  }
  out.model = std::string(model->get_string());

  if (endpoint == AnthropicEndpoint::kMessages) {
    const auto* max_tokens = obj.if_contains("max_tokens");
    if (!max_tokens) {
      return invalid("max_tokens: Field required");
    }
    if (!max_tokens->is_int64() && !max_tokens->is_uint64()) {
      return invalid("max_tokens: Input should be a valid integer");
    }
    if (max_tokens->is_int64() && max_tokens->get_int64() < 1) {
      return invalid("max_tokens: Input should be greater than or equal to 1");
    }
  }

  const auto* messages = obj.if_contains("messages");
  if (!messages) {
    return invalid("messages: Field required");
  }
  if (!messages->is_array()) {
    return invalid("messages: Input should be a valid list");
  }
  if (messages->get_array().empty()) {
    return invalid("messages: at least one message is required");
  }
  std::size_t chars = 0;
  if (const auto* system = obj.if_contains("system")) {
    chars += text_chars(*system);
  }
  for (const auto& m : messages->get_array()) {
    if (const auto* mo = m.if_object()) {
      if (const auto* content = mo->if_contains("content")) {
        chars += text_chars(*content);
      }
    }
  }
  out.input_tokens = estimate_tokens(chars);

  if (const auto* stream = obj.if_contains("stream"); stream && !stream->is_null()) {
    if (!stream->is_bool()) {
      return invalid("stream: Input should be a valid boolean");
    }
    out.stream = stream->get_bool();
  }
  out.tool_name = pick_tool(obj);
  return out;
}

}  // namespace

Result<AnthropicRequest> parse_anthropic_request(std::string_view body,
                                                 AnthropicEndpoint endpoint) {
  return read_request_object(
      body, [endpoint](const json::object& obj) { return read_anthropic_request(obj, endpoint); });
}

std::string anthropic_message_body(const AnthropicRequest& request, const ReplySpec& spec) {
  std::string out;
  open_message(out, request, spec);
  out += "[";
  if (request.tool_name) {
    append_tool_use(out, *request.tool_name, tool_arguments(spec));
  } else {
    out += R"({"type":"text","text":")";
    append_reply_text(out, spec.words);
    out += R"("})";
  }
  out += "]";
  close_message(out, stop_reason(request), request.input_tokens,
                output_tokens(request.tool_name.has_value(), spec.words));
  return out;
}

std::unique_ptr<EventSource> make_anthropic_stream(const AnthropicRequest& request,
                                                   const ReplySpec& spec) {
  return std::make_unique<AnthropicStream>(request, spec);
}

Result<Reply> respond_anthropic_messages(std::string_view body, const ReplySpec& spec) {
  auto request = parse_anthropic_request(body, AnthropicEndpoint::kMessages);
  if (!request) {
    return request.error();
  }
  if (request->tool_name && spec.tool_name) {
    request->tool_name = spec.tool_name;
  }
  if (request->stream) {
    return stream_reply(make_anthropic_stream(*request, spec));
  }
  return body_reply(anthropic_message_body(*request, spec));
}

Result<Reply> respond_anthropic_count_tokens(std::string_view body) {
  auto request = parse_anthropic_request(body, AnthropicEndpoint::kCountTokens);
  if (!request) {
    return request.error();
  }
  return body_reply(R"({"input_tokens":)" + std::to_string(request->input_tokens) + "}");
}

}  // namespace sluice::mock
