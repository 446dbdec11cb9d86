#include "bedrock_responder.h"

#include <algorithm>

#include <boost/json.hpp>

#include "codec/eventstream_writer.h"
#include "json_text.h"
#include "request_body.h"

namespace sluice::mock {
namespace {

namespace json = boost::json;

constexpr std::string_view kToolUseId = "tooluse_mock_1";

Error invalid(std::string message) { return Error(ErrorKind::kBadRequest, std::move(message)); }

constexpr std::string_view kMalformed =
    "Malformed input request, please reformat your input and try again.";
constexpr std::string_view kFirstMessageNotUser =
    "A conversation must start with a user message. Try again with a conversation that starts "
    "with a user message.";

// The first toolSpec name of toolConfig.tools ({"cachePoint":{}} entries have none).
std::optional<std::string_view> first_tool_spec(const json::object& tool_config) {
  if (const auto* tools = array_member(tool_config, "tools")) {
    for (const auto& tool : *tools) {
      const auto* obj = tool.if_object();
      const auto* spec = obj ? obj->if_contains("toolSpec") : nullptr;
      if (spec) {
        return name_member(*spec).value_or("tool");
      }
    }
  }
  return std::nullopt;
}

// The conversation ends with a tool result: the last message has a toolResult block.
bool ends_with_tool_result(const json::object& root) {
  const auto* messages = array_member(root, "messages");
  const auto* last = messages && !messages->empty() ? messages->back().if_object() : nullptr;
  const auto* blocks = last ? array_member(*last, "content") : nullptr;
  return blocks && std::any_of(blocks->begin(), blocks->end(), [](const json::value& b) {
           const auto* block = b.if_object();
           return block && block->contains("toolResult");
         });
}

// toolChoice is a union: {"auto":{}}, {"any":{}} or {"tool":{"name":..}}. Bedrock has no
// "none"; leaving toolConfig out is how a caller forbids calls.
std::optional<std::string> pick_tool(const json::object& root) {
  const auto* config = object_member(root, "toolConfig");
  if (!config) {
    return std::nullopt;
  }
  ToolChoice choice;
  if (const auto* c = object_member(*config, "toolChoice")) {
    choice.required = c->contains("any");
    if (const auto* tool = c->if_contains("tool")) {
      choice.forced = name_member(*tool);
    }
  }
  return choose_tool(first_tool_spec(*config), choice, ends_with_tool_result(root));
}

Result<BedrockRequest> read_bedrock_request(const json::object& obj) {
  const auto* messages = obj.if_contains("messages");
  if (!messages || (messages->is_array() && messages->get_array().empty())) {
    return invalid(std::string(kFirstMessageNotUser));
  }
  if (!messages->is_array()) {
    return invalid(std::string(kMalformed));
  }
  std::size_t chars = 0;
  const auto& list = messages->get_array();
  for (std::size_t i = 0; i < list.size(); ++i) {
    const auto* message = list[i].if_object();
    if (!message) {
      return invalid(std::string(kMalformed));
    }
    // Coral's constraint messages number list members from 1.
    const std::string member = "messages." + std::to_string(i + 1) + ".member.";
    const auto* role = message->if_contains("role");
    if (!role || role->is_null()) {
      return invalid("1 validation error detected: Value null at '" + member +
                     "role' failed to satisfy constraint: Member must not be null");
    }
    if (!role->is_string()) {
      return invalid(std::string(kMalformed));
    }
    if (role->get_string() != "user" && role->get_string() != "assistant") {
      return invalid("1 validation error detected: Value '" + std::string(role->get_string()) +
                     "' at '" + member +
                     "role' failed to satisfy constraint: Member must satisfy enum value set: "
                     "[user, assistant]");
    }
    if (i == 0 && role->get_string() != "user") {
      return invalid(std::string(kFirstMessageNotUser));
    }
    const auto* content = message->if_contains("content");
    if (!content || content->is_null()) {
      return invalid("1 validation error detected: Value null at '" + member +
                     "content' failed to satisfy constraint: Member must not be null");
    }
    if (!content->is_array()) {
      return invalid(std::string(kMalformed));
    }
    if (content->get_array().empty()) {
      // As in the recorded error-400-validation-with-headers.json.
      return invalid("The content field in the Message object at messages." + std::to_string(i) +
                     " is empty. Add a ContentBlock object to the content field and try again.");
    }
    chars += text_chars(*content);
  }

  if (const auto* config = obj.if_contains("inferenceConfig"); config && !config->is_null()) {
    const auto* config_obj = config->if_object();
    if (!config_obj) {
      return invalid(std::string(kMalformed));
    }
    if (const auto* max_tokens = config_obj->if_contains("maxTokens");
        max_tokens && !max_tokens->is_null()) {
      if (!max_tokens->is_int64() && !max_tokens->is_uint64()) {
        return invalid(std::string(kMalformed));
      }
      if (max_tokens->is_int64() && max_tokens->get_int64() < 1) {
        return invalid("1 validation error detected: Value '" +
                       std::to_string(max_tokens->get_int64()) +
                       "' at 'inferenceConfig.maxTokens' failed to satisfy constraint: Member "
                       "must have value greater than or equal to 1");
      }
    }
  }

  BedrockRequest out;
  if (const auto* system = obj.if_contains("system")) {
    chars += text_chars(*system);
  }
  out.input_tokens = estimate_tokens(chars);
  out.tool_name = pick_tool(obj);
  return out;
}

std::string_view stop_reason(const BedrockRequest& request) {
  return request.tool_name ? "tool_use" : "end_turn";
}

// "usage":{"inputTokens":P,"outputTokens":O,"totalTokens":P+O}
void append_usage(std::string& out, const BedrockRequest& request, const ReplySpec& spec) {
  std::uint32_t output = output_tokens(request.tool_name.has_value(), spec.words);
  out += R"("usage":{"inputTokens":)";
  out += std::to_string(request.input_tokens);
  out += R"(,"outputTokens":)";
  out += std::to_string(output);
  out += R"(,"totalTokens":)";
  out += std::to_string(std::uint64_t{request.input_tokens} + output);
  out += "}";
}

void append_metrics(std::string& out, const ReplySpec& spec) {
  out += R"("metrics":{"latencyMs":)";
  out += std::to_string(spec.latency_ms);
  out += "}";
}

// Every event payload of the live service carries a "p" member: a prefix of this alphabet
// of varying length, so that an observer of the encrypted stream cannot infer token lengths
// from message sizes. The mock derives the length from the request number and the event's
// position, so a reply is the same bytes each time.
constexpr std::string_view kPaddingAlphabet =
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";

void append_padding(std::string& out, std::uint64_t number, std::uint32_t position) {
  std::uint64_t mix = (number * 2654435761u) ^ (std::uint64_t{position} * 40503u + 17);
  std::size_t length = 1 + static_cast<std::size_t>(mix % kPaddingAlphabet.size());
  out += R"("p":")";
  out += kPaddingAlphabet.substr(0, length);
  out += '"';
}

std::string_view stream_error_message(std::string_view type) {
  return type == "throttlingException" ? "Too many requests, please wait before trying again."
                                       : "mock stream error";
}

class BedrockStream final : public PhasedStream {
 public:
  BedrockStream(const BedrockRequest& request, const ReplySpec& spec)
      : request_(request), spec_(spec), fragments_(tool_argument_fragments(tool_arguments(spec_))) {
    std::uint32_t content =
        request.tool_name ? static_cast<std::uint32_t>(fragments_.size()) : spec.words;
    std::uint32_t prelude = request.tool_name ? 2 : 1;
    if (spec.stream_error) {
      set_phases(prelude, std::min(spec.stream_error->after.value_or(content / 2), content), 1);
    } else {
      set_phases(prelude, content, spec.omit_done ? 1 : 3);
    }
  }

 private:
  // Keys in each payload are in the service's (alphabetical) order, "p" among them.
  void prelude_event(std::uint32_t i, std::string& out) override {
    std::string payload = "{";
    if (i == 0) {
      append_padding(payload, spec_.number, index());
      payload += R"(,"role":"assistant"})";
      codec::append_event_stream_event("messageStart", payload, out);
      return;
    }
    payload += R"("contentBlockIndex":0,)";
    append_padding(payload, spec_.number, index());
    payload += R"(,"start":{"toolUse":{"name":)";
    append_json_string(payload, *request_.tool_name);
    payload += R"(,"toolUseId":")";
    payload += kToolUseId;
    payload += R"("}}})";
    codec::append_event_stream_event("contentBlockStart", payload, out);
  }

  void counted_event(std::uint32_t i, std::string& out) override {
    std::string payload = R"({"contentBlockIndex":0,"delta":)";
    if (request_.tool_name) {
      payload += R"({"toolUse":{"input":)";
      append_json_string(payload, fragments_[i]);
      payload += "}}";
    } else {
      payload += R"({"text":")";
      append_reply_piece(payload, i + 1);
      payload += R"("})";
    }
    payload += ",";
    append_padding(payload, spec_.number, index());
    payload += "}";
    codec::append_event_stream_event("contentBlockDelta", payload, out);
  }

  void trailer_event(std::uint32_t i, std::string& out) override {
    std::string payload = "{";
    if (spec_.stream_error) {
      const std::string& type = spec_.stream_error->type;
      payload += R"("message":)";
      append_json_string(payload, stream_error_message(type));
      payload += "}";
      codec::append_event_stream_exception(type, payload, out);
    } else if (i == 0) {
      payload += R"("contentBlockIndex":0,)";
      append_padding(payload, spec_.number, index());
      payload += "}";
      codec::append_event_stream_event("contentBlockStop", payload, out);
    } else if (i == 1) {
      append_padding(payload, spec_.number, index());
      payload += R"(,"stopReason":)";
      append_json_string(payload, stop_reason(request_));
      payload += "}";
      codec::append_event_stream_event("messageStop", payload, out);
    } else {
      append_metrics(payload, spec_);
      payload += ",";
      append_padding(payload, spec_.number, index());
      payload += ",";
      append_usage(payload, request_, spec_);
      payload += "}";
      codec::append_event_stream_event("metadata", payload, out);
    }
  }

  BedrockRequest request_;
  ReplySpec spec_;
  std::array<std::string_view, 3> fragments_;  // into spec_
};

bool is_model_id_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
         c == '_' || c == '.' || c == ':' || c == '/';
}

}  // namespace

Result<BedrockRequest> parse_bedrock_request(std::string_view body) {
  return read_request_object(body, read_bedrock_request, kMalformed);
}

Result<void> check_bedrock_model_id(std::string_view model_id) {
  // ConversationalModelId in the service model: 1..2048 characters.
  if (model_id.empty() || model_id.size() > 2048 ||
      !std::all_of(model_id.begin(), model_id.end(), is_model_id_char)) {
    return invalid("The provided model identifier is invalid.");
  }
  return {};
}

std::string bedrock_converse_body(const BedrockRequest& request, const ReplySpec& spec) {
  std::string out = "{";
  append_metrics(out, spec);
  out += R"(,"output":{"message":{"content":[)";
  if (request.tool_name) {
    // The recorded converse-tool-use.json carries "type":"tool_use" beside the documented
    // members.
    out += R"({"toolUse":{"input":)";
    out += tool_arguments(spec);
    out += R"(,"name":)";
    append_json_string(out, *request.tool_name);
    out += R"(,"toolUseId":")";
    out += kToolUseId;
    out += R"(","type":"tool_use"}})";
  } else {
    out += R"({"text":")";
    append_reply_text(out, spec.words);
    out += R"("})";
  }
  out += R"(],"role":"assistant"}},"stopReason":)";
  append_json_string(out, stop_reason(request));
  out += ",";
  append_usage(out, request, spec);
  out += "}";
  return out;
}

std::unique_ptr<EventSource> make_bedrock_stream(const BedrockRequest& request,
                                                 const ReplySpec& spec) {
  return std::make_unique<BedrockStream>(request, spec);
}

Result<Reply> respond_bedrock(std::string_view body, std::string_view model_id,
                              const ReplySpec& spec, BedrockOperation operation) {
  if (auto ok = check_bedrock_model_id(model_id); !ok) {
    return ok.error();
  }
  auto request = parse_bedrock_request(body);
  if (!request) {
    return request.error();
  }
  if (request->tool_name && spec.tool_name) {
    request->tool_name = spec.tool_name;
  }
  if (operation == BedrockOperation::kConverseStream) {
    return stream_reply(make_bedrock_stream(*request, spec), "application/vnd.amazon.eventstream");
  }
  return body_reply(bedrock_converse_body(*request, spec));
}

}  // namespace sluice::mock
