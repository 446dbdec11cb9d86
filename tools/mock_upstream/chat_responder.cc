#include "chat_responder.h"

#include <boost/json.hpp>

#include "json_text.h"
#include "prompt_cache.h"
#include "request_body.h"

namespace sluice::mock {
namespace {

namespace json = boost::json;

constexpr std::string_view kToolCallId = "call_mock_1";

// The name of a chat tool: {"type":"function","function":{"name":..}}, or a bare "name".
std::optional<std::string_view> tool_name_of(const json::value& tool) {
  if (const auto* obj = tool.if_object()) {
    if (const auto* fn = object_member(*obj, "function")) {
      if (const auto* name = string_member(*fn, "name")) {
        return *name;
      }
    }
  }
  return name_member(tool);
}

// The conversation ends with a tool result: a "tool" (or legacy "function") message.
bool ends_with_tool_result(const json::object& root) {
  const auto* messages = array_member(root, "messages");
  const auto* last = messages && !messages->empty() ? messages->back().if_object() : nullptr;
  const auto* role = last ? string_member(*last, "role") : nullptr;
  return role && (*role == "tool" || *role == "function");
}

std::optional<std::string> pick_tool(const json::object& root) {
  ToolChoice choice;
  if (const auto* c = root.if_contains("tool_choice")) {
    choice.forbidden = c->is_string() && c->get_string() == "none";
    choice.required = c->is_string() && c->get_string() == "required";
    choice.forced = tool_name_of(*c);
  }
  return choose_tool(first_tool(root, tool_name_of), choice, ends_with_tool_result(root));
}

void append_usage(std::string& out, std::uint32_t prompt, std::uint32_t completion,
                  std::uint32_t cached) {
  out += R"({"prompt_tokens":)";
  out += std::to_string(prompt);
  out += R"(,"completion_tokens":)";
  out += std::to_string(completion);
  out += R"(,"total_tokens":)";
  out += std::to_string(std::uint64_t{prompt} + completion);
  out += R"(,"prompt_tokens_details":{"cached_tokens":)";
  out += std::to_string(cached);
  out += R"(,"audio_tokens":0},)"
         R"("completion_tokens_details":{"reasoning_tokens":0,"audio_tokens":0,)"
         R"("accepted_prediction_tokens":0,"rejected_prediction_tokens":0}})";
}

// A chat.completion up to the message's first field: {"id":..,...,"message":{"role":"assistant",
void open_completion(std::string& out, std::string_view id, std::int64_t created,
                     std::string_view model) {
  out += R"({"id":)";
  append_json_string(out, id);
  out += R"(,"object":"chat.completion","created":)";
  out += std::to_string(created);
  out += R"(,"model":)";
  append_json_string(out, model);
  out += R"(,"choices":[{"index":0,"message":{"role":"assistant",)";
}

// What follows a text message's "content" value, up to the end of "choices".
constexpr std::string_view kTextChoiceEnd =
    R"(,"refusal":null,"annotations":[]},"logprobs":null,"finish_reason":"stop"}])";

// The rest of a chat.completion after "choices": usage and the closing fields.
void close_completion(std::string& out, std::uint32_t prompt, std::uint32_t completion,
                      std::uint32_t cached = 0) {
  out += R"(,"usage":)";
  append_usage(out, prompt, completion, cached);
  out += R"(,"service_tier":"default","system_fingerprint":"fp_mock"})";
}

std::uint32_t completion_tokens(const ChatRequest& request, const ReplySpec& spec) {
  return output_tokens(request.tool_name.has_value(), spec.words);
}

class ChatStream final : public PhasedStream {
 public:
  ChatStream(const ChatRequest& request, const ReplySpec& spec)
      : arguments_(tool_arguments(spec)),
        include_usage_(request.include_usage),
        prompt_tokens_(request.prompt_tokens),
        cached_tokens_(request.cached_tokens),
        completion_tokens_(completion_tokens(request, spec)) {
    prefix_ = R"({"id":"chatcmpl-mock-)";
    prefix_ += std::to_string(spec.number);
    prefix_ += R"(","object":"chat.completion.chunk","created":)";
    prefix_ += std::to_string(spec.created);
    prefix_ += R"(,"model":)";
    append_json_string(prefix_, request.model);
    prefix_ += R"(,"service_tier":"default","system_fingerprint":"fp_mock","choices":[)";
    if (request.tool_name) {
      tool_name_json_.emplace();
      append_json_string(*tool_name_json_, *request.tool_name);
    }
    // Trailer: the finish chunk, the usage chunk if asked for, [DONE] unless omitted.
    fragments_ = tool_argument_fragments(arguments_);
    std::uint32_t counted = tool_name_json_ ? fragments_.size() : spec.words;
    set_phases(1, counted, 1 + (include_usage_ ? 1 : 0) + (spec.omit_done ? 0 : 1));
  }

 private:
  void prelude_event(std::uint32_t, std::string& out) override {
    begin_choice(out);
    if (tool_name_json_) {
      out += R"({"role":"assistant","content":null,"tool_calls":[{"index":0,"id":")";
      out += kToolCallId;
      out += R"(","type":"function","function":{"name":)";
      out += *tool_name_json_;
      out += R"(,"arguments":""}}],"refusal":null})";
    } else {
      out += R"({"role":"assistant","content":"","refusal":null})";
    }
    end_choice(out, {});
  }

  void counted_event(std::uint32_t i, std::string& out) override {
    begin_choice(out);
    if (tool_name_json_) {
      out += R"({"tool_calls":[{"index":0,"function":{"arguments":)";
      append_json_string(out, fragments_[i]);
      out += "}}]}";
    } else {
      out += R"({"content":")";
      append_reply_piece(out, i + 1);
      out += R"("})";
    }
    end_choice(out, {});
  }

  void trailer_event(std::uint32_t i, std::string& out) override {
    if (i == 0) {
      begin_choice(out);
      out += "{}";
      end_choice(out, tool_name_json_ ? "tool_calls" : "stop");
    } else if (include_usage_ && i == 1) {
      out += "data: ";
      out += prefix_;
      out += R"(],"usage":)";
      append_usage(out, prompt_tokens_, completion_tokens_, cached_tokens_);
      out += "}\n\n";
    } else {
      out += "data: [DONE]\n\n";
    }
  }

  void begin_choice(std::string& out) const {
    out += "data: ";
    out += prefix_;
    out += R"({"index":0,"delta":)";
  }

  void end_choice(std::string& out, std::string_view finish_reason) const {
    out += R"(,"logprobs":null,"finish_reason":)";
    if (finish_reason.empty()) {
      out += "null";
    } else {
      append_json_string(out, finish_reason);
    }
    out += "}]";
    if (include_usage_) {
      out += R"(,"usage":null)";
    }
    out += "}\n\n";
  }

  std::string prefix_;
  std::optional<std::string> tool_name_json_;
  std::string arguments_;
  std::array<std::string_view, 3> fragments_;  // into arguments_
  bool include_usage_;
  std::uint32_t prompt_tokens_;
  std::uint32_t cached_tokens_;
  std::uint32_t completion_tokens_;
};

}  // namespace

namespace {

Result<ChatRequest> read_chat_request(const json::object& obj) {
  ChatRequest out;
  auto model = read_model(obj);
  if (!model) {
    return model.error();
  }
  out.model = std::move(*model);

  const auto* messages = obj.if_contains("messages");
  if (!messages) {
    return bad_request("Missing required parameter: 'messages'.", "messages");
  }
  if (!messages->is_array()) {
    return bad_request("Invalid type for 'messages': expected an array of objects.", "messages");
  }
  std::size_t chars = 0;
  std::uint64_t prefix = 0xcbf29ce484222325ull;
  for (const auto& m : messages->get_array()) {
    if (const auto* mo = m.if_object()) {
      if (const auto* content = mo->if_contains("content")) {
        chars += text_chars(*content);
      }
    }
    for (const char c : json::serialize(m)) {
      prefix = (prefix ^ static_cast<unsigned char>(c)) * 0x100000001b3ull;
    }
    out.prefix_hashes.push_back(prefix);
    out.prefix_tokens.push_back(estimate_tokens(chars));
  }
  out.prompt_tokens = estimate_tokens(chars);

  if (const auto* stream = obj.if_contains("stream"); stream && stream->is_bool()) {
    out.stream = stream->get_bool();
  }
  if (const auto* so = object_member(obj, "stream_options")) {
    if (const auto* iu = so->if_contains("include_usage"); iu && iu->is_bool()) {
      out.include_usage = out.stream && iu->get_bool();
    }
  }
  out.tool_name = pick_tool(obj);
  return out;
}

}  // namespace

Result<ChatRequest> parse_chat_request(std::string_view body) {
  return read_request_object(body, read_chat_request);
}

std::string chat_completion_body(const ChatRequest& request, const ReplySpec& spec) {
  std::string out;
  open_completion(out, "chatcmpl-mock-" + std::to_string(spec.number), spec.created, request.model);
  if (request.tool_name) {
    out += R"("content":null,"refusal":null,"annotations":[],"tool_calls":[{"id":")";
    out += kToolCallId;
    out += R"(","type":"function","function":{"name":)";
    append_json_string(out, *request.tool_name);
    out += R"(,"arguments":)";
    append_json_string(out, tool_arguments(spec));
    out += R"(}}]},"logprobs":null,"finish_reason":"tool_calls"}])";
  } else {
    out += R"("content":")";
    append_reply_text(out, spec.words);
    out.push_back('"');
    out += kTextChoiceEnd;
  }
  close_completion(out, request.prompt_tokens, completion_tokens(request, spec),
                   request.cached_tokens);
  return out;
}

std::string text_completion_body(std::string_view id, std::int64_t created, std::string_view model,
                                 std::string_view content) {
  std::string out;
  open_completion(out, id, created, model);
  out += R"("content":)";
  append_json_string(out, content);
  out += kTextChoiceEnd;
  close_completion(out, 1, 1);
  return out;
}

std::unique_ptr<EventSource> make_chat_stream(const ChatRequest& request, const ReplySpec& spec) {
  return std::make_unique<ChatStream>(request, spec);
}

Result<Reply> respond_chat(std::string_view body, const ReplySpec& spec) {
  auto chat = parse_chat_request(body);
  if (!chat) {
    return chat.error();
  }
  if (chat->tool_name && spec.tool_name) {
    chat->tool_name = spec.tool_name;
  }
  if (spec.prompt_cache != nullptr) {
    chat->cached_tokens = spec.prompt_cache->cached_tokens(
        spec.prompt_cache_scope, chat->prefix_hashes, chat->prefix_tokens);
  }
  if (chat->stream) {
    return stream_reply(make_chat_stream(*chat, spec));
  }
  return body_reply(chat_completion_body(*chat, spec));
}

}  // namespace sluice::mock
