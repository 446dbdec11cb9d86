#include "gemini_responder.h"

#include <algorithm>

#include <boost/json.hpp>

#include "json_text.h"
#include "request_body.h"

namespace sluice::mock {
namespace {

namespace json = boost::json;

Error invalid(std::string message) { return Error(ErrorKind::kBadRequest, std::move(message)); }

// Characters of the text parts of a Content object ({"role":..,"parts":[{"text":..}]}).
std::size_t content_chars(const json::value& content) {
  const auto* obj = content.if_object();
  const auto* parts = obj ? obj->if_contains("parts") : nullptr;
  return parts ? text_chars(*parts) : 0;
}

std::optional<std::string_view> first_function(const json::object& root) {
  if (const auto* tools = array_member(root, "tools")) {
    for (const auto& tool : *tools) {
      const auto* obj = tool.if_object();
      const auto* decls = obj ? array_member(*obj, "functionDeclarations") : nullptr;
      if (decls && !decls->empty()) {
        return name_member(decls->front()).value_or("tool");
      }
    }
  }
  return std::nullopt;
}

// The conversation ends with a tool result: the last content has a functionResponse part.
bool ends_with_function_response(const json::object& root) {
  const auto* contents = array_member(root, "contents");
  const auto* last = contents && !contents->empty() ? contents->back().if_object() : nullptr;
  const auto* parts = last ? array_member(*last, "parts") : nullptr;
  return parts && std::any_of(parts->begin(), parts->end(), [](const json::value& p) {
           const auto* part = p.if_object();
           return part && part->contains("functionResponse");
         });
}

std::optional<std::string> pick_function(const json::object& root) {
  ToolChoice choice;
  const auto* config = object_member(root, "toolConfig");
  const auto* calling = config ? object_member(*config, "functionCallingConfig") : nullptr;
  const auto* mode = calling ? string_member(*calling, "mode") : nullptr;
  choice.forbidden = mode && *mode == "NONE";
  choice.required = mode && *mode == "ANY";
  const auto* allowed = calling ? array_member(*calling, "allowedFunctionNames") : nullptr;
  if (mode && *mode == "ANY" && allowed && !allowed->empty() && allowed->front().is_string()) {
    choice.forced = allowed->front().get_string();
  }
  return choose_tool(first_function(root), choice, ends_with_function_response(root));
}

// One GenerateContentResponse as compact JSON. `parts` is the JSON of the parts array's
// items; `candidates_tokens` the (cumulative) output so far.
void append_response(std::string& out, const GeminiRequest& request, std::string_view model,
                     const ReplySpec& spec, std::string_view parts, bool finished,
                     std::uint32_t candidates_tokens) {
  out += R"({"candidates":[{"content":{"parts":[)";
  out += parts;
  out += R"(],"role":"model"},)";
  if (finished) {
    out += R"("finishReason":"STOP",)";
  }
  out += R"("index":0}],"usageMetadata":{"promptTokenCount":)";
  out += std::to_string(request.prompt_tokens);
  out += R"(,"candidatesTokenCount":)";
  out += std::to_string(candidates_tokens);
  out += R"(,"totalTokenCount":)";
  out += std::to_string(std::uint64_t{request.prompt_tokens} + candidates_tokens);
  out += R"(,"promptTokensDetails":[{"modality":"TEXT","tokenCount":)";
  out += std::to_string(request.prompt_tokens);
  out += R"(}]},"modelVersion":)";
  append_json_string(out, model);
  out += R"(,"responseId":"gemini-mock-)";
  out += std::to_string(spec.number);
  out += R"("})";
}

// {"functionCall":{"name":..,"args":{"mock":true}}}
std::string function_call_part(std::string_view name, const ReplySpec& spec) {
  std::string out = R"({"functionCall":{"name":)";
  append_json_string(out, name);
  out += R"(,"args":)";
  out += tool_arguments(spec);
  out += "}}";
  return out;
}

class GeminiStream final : public PhasedStream {
 public:
  GeminiStream(const GeminiRequest& request, std::string_view model, const ReplySpec& spec,
               GeminiFraming framing)
      : request_(request), model_(model), spec_(spec), framing_(framing) {
    std::uint32_t chunks = request.function_name ? 1 : spec.words;
    // With no words there is still one chunk: empty text, finishReason STOP.
    bool empty = chunks == 0;
    bool array_end = framing == GeminiFraming::kJsonArray && !spec.omit_done;
    set_phases(0, chunks, (empty ? 1 : 0) + (array_end ? 1 : 0));
  }

 private:
  void prelude_event(std::uint32_t, std::string&) override {}

  void counted_event(std::uint32_t i, std::string& out) override {
    std::string part;
    std::uint32_t tokens = 0;
    if (request_.function_name) {
      part = function_call_part(*request_.function_name, spec_);
      tokens = output_tokens(true, spec_.words);
    } else {
      part = R"({"text":")";
      append_reply_piece(part, i + 1);
      part += R"("})";
      tokens = i + 3;  // "Mock reply w1" is 3 words, each later piece 1
    }
    write_chunk(out, part, i + 1 == counted(), tokens);
  }

  void trailer_event(std::uint32_t i, std::string& out) override {
    if (i == 0 && counted() == 0) {
      write_chunk(out, R"({"text":""})", true, output_tokens(false, 0));
    } else {
      out += "\n]";
    }
  }

  void write_chunk(std::string& out, std::string_view part, bool finished, std::uint32_t tokens) {
    std::string compact;
    append_response(compact, request_, model_, spec_, part, finished, tokens);
    if (framing_ == GeminiFraming::kSse) {
      out += "data: ";
      append_google_json(out, compact, GoogleJsonStyle::kColonSpace);
      out += "\r\n\r\n";
    } else {
      out += index() == 0 ? "[" : "\n,\r\n";
      append_google_json(out, compact, GoogleJsonStyle::kPretty);
    }
  }

  GeminiRequest request_;
  std::string model_;
  ReplySpec spec_;
  GeminiFraming framing_;
};

Result<GeminiRequest> read_gemini_request(const json::object& obj) {
  const auto* contents = obj.if_contains("contents");
  if (!contents || (contents->is_array() && contents->get_array().empty())) {
    return invalid("* GenerateContentRequest.contents: contents is not specified\n");
  }
  if (!contents->is_array()) {
    return invalid("Invalid value at 'contents': expected a list of Content.");
  }
  GeminiRequest out;
  std::size_t chars = 0;
  if (const auto* system = obj.if_contains("systemInstruction")) {
    chars += content_chars(*system);
  }
  for (const auto& content : contents->get_array()) {
    chars += content_chars(content);
  }
  out.prompt_tokens = estimate_tokens(chars);
  out.function_name = pick_function(obj);
  return out;
}

}  // namespace

Result<GeminiRequest> parse_gemini_request(std::string_view body) {
  return read_request_object(body, read_gemini_request, "Invalid JSON payload received.");
}

std::string gemini_response_body(const GeminiRequest& request, std::string_view model,
                                 const ReplySpec& spec) {
  std::string part;
  if (request.function_name) {
    part = function_call_part(*request.function_name, spec);
  } else {
    part = R"({"text":")";
    append_reply_text(part, spec.words);
    part += R"("})";
  }
  std::string compact;
  append_response(compact, request, model, spec, part, true,
                  output_tokens(request.function_name.has_value(), spec.words));
  std::string out;
  append_google_json(out, compact, GoogleJsonStyle::kPretty);
  return out;
}

std::unique_ptr<EventSource> make_gemini_stream(const GeminiRequest& request,
                                                std::string_view model, const ReplySpec& spec,
                                                GeminiFraming framing) {
  return std::make_unique<GeminiStream>(request, model, spec, framing);
}

Result<Reply> respond_gemini(std::string_view body, std::string_view model, const ReplySpec& spec,
                             std::optional<GeminiFraming> framing) {
  auto request = parse_gemini_request(body);
  if (!request) {
    return request.error();
  }
  if (request->function_name && spec.tool_name) {
    request->function_name = spec.tool_name;
  }
  if (!framing) {
    return body_reply(gemini_response_body(*request, model, spec));
  }
  return stream_reply(make_gemini_stream(*request, model, spec, *framing),
                      *framing == GeminiFraming::kSse ? "text/event-stream" : "application/json");
}

}  // namespace sluice::mock
