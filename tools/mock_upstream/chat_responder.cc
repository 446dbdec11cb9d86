#include "chat_responder.h"

#include <array>

#include <boost/json.hpp>

#include "json_text.h"
#include "request_body.h"

namespace sluice::mock {
namespace {

namespace json = boost::json;

constexpr std::string_view kToolCallId = "call_mock_1";
constexpr std::string_view kToolArguments = R"({"mock":true})";
// kToolArguments split the way OpenAI streams arguments: arbitrary cuts, not tokens.
constexpr std::array<std::string_view, 3> kToolArgumentFragments = {R"({")", R"(mock":)", "true}"};
constexpr std::uint32_t kToolCompletionTokens = 3;

std::size_t text_chars(const json::value& content) {
  if (const auto* s = content.if_string()) {
    return s->size();
  }
  std::size_t n = 0;
  if (const auto* parts = content.if_array()) {
    for (const auto& part : *parts) {
      if (const auto* obj = part.if_object()) {
        if (const auto* text = obj->if_contains("text"); text && text->is_string()) {
          n += text->get_string().size();
        }
      }
    }
  }
  return n;
}

std::optional<std::string> pick_tool(const json::object& root) {
  const auto* tools = root.if_contains("tools");
  if (!tools || !tools->is_array() || tools->get_array().empty()) {
    return std::nullopt;
  }
  if (const auto* choice = root.if_contains("tool_choice")) {
    if (choice->is_string() && choice->get_string() == "none") {
      return std::nullopt;
    }
    if (const auto* obj = choice->if_object()) {
      if (const auto* fn = obj->if_contains("function"); fn && fn->is_object()) {
        if (const auto* name = fn->get_object().if_contains("name"); name && name->is_string()) {
          return std::string(name->get_string());
        }
      }
    }
  }
  const auto& first = tools->get_array().front();
  if (const auto* tool = first.if_object()) {
    if (const auto* fn = tool->if_contains("function"); fn && fn->is_object()) {
      if (const auto* name = fn->get_object().if_contains("name"); name && name->is_string()) {
        return std::string(name->get_string());
      }
    }
    if (const auto* name = tool->if_contains("name"); name && name->is_string()) {
      return std::string(name->get_string());
    }
  }
  return std::string("tool");
}

void append_usage(std::string& out, std::uint32_t prompt, std::uint32_t completion) {
  out += R"({"prompt_tokens":)";
  out += std::to_string(prompt);
  out += R"(,"completion_tokens":)";
  out += std::to_string(completion);
  out += R"(,"total_tokens":)";
  out += std::to_string(std::uint64_t{prompt} + completion);
  out += R"(,"prompt_tokens_details":{"cached_tokens":0,"audio_tokens":0},)"
         R"("completion_tokens_details":{"reasoning_tokens":0,"audio_tokens":0,)"
         R"("accepted_prediction_tokens":0,"rejected_prediction_tokens":0}})";
}

void append_word(std::string& out, std::uint32_t i) {
  out.push_back('w');
  out += std::to_string(i);
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
void close_completion(std::string& out, std::uint32_t prompt, std::uint32_t completion) {
  out += R"(,"usage":)";
  append_usage(out, prompt, completion);
  out += R"(,"service_tier":"default","system_fingerprint":"fp_mock"})";
}

std::uint32_t completion_tokens(const ChatRequest& request, const ChatReplySpec& spec) {
  return request.tool_name ? kToolCompletionTokens : spec.words + 2;
}

class ChatStream final : public EventSource {
 public:
  ChatStream(const ChatRequest& request, const ChatReplySpec& spec)
      : words_(spec.words),
        include_usage_(request.include_usage),
        done_event_(!spec.omit_done),
        prompt_tokens_(request.prompt_tokens),
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
  }

  bool next(std::string& out, EventKind& kind) override {
    std::uint32_t counted = tool_name_json_ ? kToolArgumentFragments.size() : words_;
    std::uint32_t i = position_++;
    if (i == 0) {
      kind = EventKind::kPrelude;
      if (tool_name_json_) {
        begin_choice(out);
        out += R"({"role":"assistant","content":null,"tool_calls":[{"index":0,"id":")";
        out += kToolCallId;
        out += R"(","type":"function","function":{"name":)";
        out += *tool_name_json_;
        out += R"(,"arguments":""}}],"refusal":null})";
        end_choice(out, {});
      } else {
        begin_choice(out);
        out += R"({"role":"assistant","content":"","refusal":null})";
        end_choice(out, {});
      }
      return true;
    }
    if (i <= counted) {
      kind = EventKind::kCounted;
      begin_choice(out);
      if (tool_name_json_) {
        out += R"({"tool_calls":[{"index":0,"function":{"arguments":)";
        append_json_string(out, kToolArgumentFragments[i - 1]);
        out += "}}]}";
      } else {
        out += R"({"content":")";
        if (i == 1) {
          out += "Mock reply ";
        } else {
          out.push_back(' ');
        }
        append_word(out, i);
        out += R"("})";
      }
      end_choice(out, {});
      return true;
    }
    kind = EventKind::kTrailer;
    if (i == counted + 1) {
      begin_choice(out);
      out += "{}";
      end_choice(out, tool_name_json_ ? "tool_calls" : "stop");
      return true;
    }
    if (include_usage_ && i == counted + 2) {
      out += "data: ";
      out += prefix_;
      out += R"(],"usage":)";
      append_usage(out, prompt_tokens_, completion_tokens_);
      out += "}\n\n";
      return true;
    }
    if (done_event_ && i == counted + (include_usage_ ? 3 : 2)) {
      out += "data: [DONE]\n\n";
      return true;
    }
    --position_;
    return false;
  }

 private:
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
  std::uint32_t words_;
  std::uint32_t position_ = 0;
  bool include_usage_;
  bool done_event_;
  std::uint32_t prompt_tokens_;
  std::uint32_t completion_tokens_;
};

}  // namespace

Result<ChatRequest> parse_chat_request(std::string_view body) {
  // Small requests parse without touching the heap; large ones spill over transparently.
  unsigned char scratch[4096];
  json::monotonic_resource mr(scratch, sizeof scratch);
  auto root = parse_request_object(body, mr, 128);
  if (!root) {
    return root.error();
  }
  const json::object* obj = &root->get_object();
  ChatRequest out;
  auto model = read_model(*obj);
  if (!model) {
    return model.error();
  }
  out.model = std::move(*model);

  const auto* messages = obj->if_contains("messages");
  if (!messages) {
    return bad_request("Missing required parameter: 'messages'.", "messages");
  }
  if (!messages->is_array()) {
    return bad_request("Invalid type for 'messages': expected an array of objects.", "messages");
  }
  std::size_t chars = 0;
  for (const auto& m : messages->get_array()) {
    if (const auto* mo = m.if_object()) {
      if (const auto* content = mo->if_contains("content")) {
        chars += text_chars(*content);
      }
    }
  }
  out.prompt_tokens = static_cast<std::uint32_t>(chars / 4 + 1);

  if (const auto* stream = obj->if_contains("stream"); stream && stream->is_bool()) {
    out.stream = stream->get_bool();
  }
  if (const auto* so = obj->if_contains("stream_options"); so && so->is_object()) {
    if (const auto* iu = so->get_object().if_contains("include_usage"); iu && iu->is_bool()) {
      out.include_usage = out.stream && iu->get_bool();
    }
  }
  out.tool_name = pick_tool(*obj);
  return out;
}

std::string chat_completion_body(const ChatRequest& request, const ChatReplySpec& spec) {
  std::string out;
  open_completion(out, "chatcmpl-mock-" + std::to_string(spec.number), spec.created, request.model);
  if (request.tool_name) {
    out += R"("content":null,"refusal":null,"annotations":[],"tool_calls":[{"id":")";
    out += kToolCallId;
    out += R"(","type":"function","function":{"name":)";
    append_json_string(out, *request.tool_name);
    out += R"(,"arguments":)";
    append_json_string(out, kToolArguments);
    out += R"(}}]},"logprobs":null,"finish_reason":"tool_calls"}])";
  } else {
    out += R"("content":"Mock reply)";
    for (std::uint32_t i = 1; i <= spec.words; ++i) {
      out.push_back(' ');
      append_word(out, i);
    }
    out.push_back('"');
    out += kTextChoiceEnd;
  }
  close_completion(out, request.prompt_tokens, completion_tokens(request, spec));
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

std::unique_ptr<EventSource> make_chat_stream(const ChatRequest& request,
                                              const ChatReplySpec& spec) {
  return std::make_unique<ChatStream>(request, spec);
}

}  // namespace sluice::mock
