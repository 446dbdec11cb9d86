#include "protocol/openai_chat/request_decoder.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>

#include <boost/json/monotonic_resource.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

#include "codec/data_url.h"
#include "codec/json_read.h"

namespace sluice::protocol::openai_chat {
namespace json = boost::json;
using ir::PartKind;

namespace {

constexpr std::string_view kEmptySchema = R"({"type":"object"})";

Error bad(std::string message, std::string param) {
  return Error(ErrorKind::kBadRequest, std::move(message)).with_param(std::move(param));
}

const json::value* field(const json::object& o, std::string_view key) {
  const json::value* v = o.if_contains(key);
  return (v == nullptr || v->is_null()) ? nullptr : v;
}

std::optional<std::uint32_t> as_u32(const json::value& v) {
  if (auto n = codec::as_count(v); n && *n <= std::numeric_limits<std::uint32_t>::max()) {
    return static_cast<std::uint32_t>(*n);
  }
  return std::nullopt;
}

// Content (string, null or array of parts) into `out`. `allow_images` for user messages.
Result<void> decode_content(const json::value* content, bool allow_images,
                            std::vector<ir::ContentPart>& out, const std::string& param) {
  if (content == nullptr) {
    return {};
  }
  if (content->is_string()) {
    out.push_back(ir::ContentPart::make_text(std::string(content->get_string())));
    return {};
  }
  if (!content->is_array()) {
    return bad("'content' must be a string or an array of parts", param);
  }
  for (const json::value& pv : content->get_array()) {
    const json::object* po = pv.if_object();
    const json::value* type = po ? field(*po, "type") : nullptr;
    if (type == nullptr || !type->is_string()) {
      return bad("each content part must be an object with a 'type'", param);
    }
    const json::string& t = type->get_string();
    if (t == "text") {
      const json::value* text = field(*po, "text");
      if (text == nullptr || !text->is_string()) {
        return bad("text parts need a string 'text'", param);
      }
      out.push_back(ir::ContentPart::make_text(std::string(text->get_string())));
    } else if (t == "image_url" && allow_images) {
      const json::value* iu = field(*po, "image_url");
      const json::value* url = (iu && iu->is_object()) ? field(iu->get_object(), "url") : nullptr;
      if (url == nullptr || !url->is_string()) {
        return bad("image_url parts need an 'image_url.url' string", param);
      }
      ir::ContentPart part;
      part.kind = PartKind::kImage;
      const std::string_view u = url->get_string();
      if (auto data = codec::parse_base64_data_url(u)) {
        part.media_type = std::string(data->media_type);
        part.source = std::string(data->payload);
      } else {
        part.source = std::string(u);
        part.image_is_url = true;
      }
      if (const json::value* d = field(iu->get_object(), "detail"); d && d->is_string()) {
        part.detail = std::string(d->get_string());
      }
      out.push_back(std::move(part));
    } else {
      return bad("content part type '" + std::string(t) + "' is not supported here", param);
    }
  }
  return {};
}

Result<void> decode_tool_calls(const json::value& calls, std::vector<ir::ContentPart>& out,
                               const std::string& param) {
  if (!calls.is_array()) {
    return bad("'tool_calls' must be an array", param);
  }
  for (const json::value& cv : calls.get_array()) {
    const json::object* co = cv.if_object();
    const json::value* id = co ? field(*co, "id") : nullptr;
    const json::value* fn = co ? field(*co, "function") : nullptr;
    const json::value* name = (fn && fn->is_object()) ? field(fn->get_object(), "name") : nullptr;
    if (id == nullptr || !id->is_string() || name == nullptr || !name->is_string()) {
      return bad("each tool call needs an 'id' and a 'function.name'", param);
    }
    ir::ContentPart part;
    part.kind = PartKind::kToolCall;
    part.id = std::string(id->get_string());
    part.name = std::string(name->get_string());
    const json::value* args = field(fn->get_object(), "arguments");
    if (args != nullptr && args->is_string()) {
      part.arguments = std::string(args->get_string());
    } else if (args != nullptr && args->is_object()) {
      part.arguments = json::serialize(*args);  // some servers send an object
    } else if (args != nullptr) {
      return bad("'function.arguments' must be a JSON string", param);
    }
    if (part.arguments.empty()) {
      part.arguments = "{}";
    }
    out.push_back(std::move(part));
  }
  return {};
}

Result<void> decode_tools(const json::value& tools, ir::Request& req) {
  if (!tools.is_array()) {
    return bad("'tools' must be an array", "tools");
  }
  for (const json::value& tv : tools.get_array()) {
    const json::object* to = tv.if_object();
    const json::value* fn = to ? field(*to, "function") : nullptr;
    const json::value* name = (fn && fn->is_object()) ? field(fn->get_object(), "name") : nullptr;
    if (name == nullptr || !name->is_string()) {
      return bad("each tool needs a 'function.name'", "tools");
    }
    const json::object& fo = fn->get_object();
    ir::Tool tool;
    tool.name = std::string(name->get_string());
    if (const json::value* d = field(fo, "description"); d && d->is_string()) {
      tool.description = std::string(d->get_string());
    }
    if (const json::value* p = field(fo, "parameters")) {
      tool.parameters = json::serialize(*p);
    } else {
      tool.parameters = std::string(kEmptySchema);
    }
    req.tools.push_back(std::move(tool));
  }
  return {};
}

Result<void> decode_tool_choice(const json::value& tc, ir::ToolChoice& choice) {
  if (tc.is_string()) {
    const json::string& s = tc.get_string();
    if (s == "auto") {
      choice.mode = ir::ToolChoiceMode::kAuto;
    } else if (s == "none") {
      choice.mode = ir::ToolChoiceMode::kNone;
    } else if (s == "required") {
      choice.mode = ir::ToolChoiceMode::kRequired;
    } else {
      return bad("unknown 'tool_choice' value", "tool_choice");
    }
    return {};
  }
  const json::value* fn = tc.is_object() ? field(tc.get_object(), "function") : nullptr;
  const json::value* name = (fn && fn->is_object()) ? field(fn->get_object(), "name") : nullptr;
  if (name == nullptr || !name->is_string()) {
    return bad("'tool_choice' must be a string or {type:function,function:{name}}", "tool_choice");
  }
  choice.mode = ir::ToolChoiceMode::kNamed;
  choice.name = std::string(name->get_string());
  return {};
}

Result<void> decode_messages(const json::array& messages, ir::Request& req) {
  bool leading = true;
  // Index in req.messages of the user message collecting the current run of tool results;
  // kNoRun outside a run. (A plain index: GCC 12 warns on std::optional here, wrongly.)
  constexpr std::size_t kNoRun = static_cast<std::size_t>(-1);
  std::size_t tool_run = kNoRun;
  for (std::size_t i = 0; i < messages.size(); ++i) {
    const std::string param = "messages[" + std::to_string(i) + "]";
    const json::object* mo = messages[i].if_object();
    const json::value* role = mo ? field(*mo, "role") : nullptr;
    if (role == nullptr || !role->is_string()) {
      return bad("each message must be an object with a string 'role'", param);
    }
    const json::string& r = role->get_string();
    const json::value* content = field(*mo, "content");
    std::string name;
    if (const json::value* n = field(*mo, "name"); n && n->is_string()) {
      name = std::string(n->get_string());
    }
    const bool is_system = r == "system" || r == "developer";
    if (is_system && leading) {
      if (auto ok = decode_content(content, false, req.system, param); !ok) {
        return ok.error();
      }
      continue;
    }
    leading = false;
    if (r == "tool") {
      const json::value* id = field(*mo, "tool_call_id");
      if (id == nullptr || !id->is_string()) {
        return bad("tool messages need a string 'tool_call_id'", param);
      }
      ir::ContentPart result;
      result.kind = PartKind::kToolResult;
      result.id = std::string(id->get_string());
      if (auto ok = decode_content(content, false, result.parts, param); !ok) {
        return ok.error();
      }
      if (tool_run == kNoRun) {
        req.messages.emplace_back().role = ir::Role::kUser;
        tool_run = req.messages.size() - 1;
      }
      req.messages[tool_run].content.push_back(std::move(result));
      continue;
    }
    if (r == "user" && tool_run != kNoRun) {
      ir::Message& merged = req.messages[tool_run];
      if (auto ok = decode_content(content, true, merged.content, param); !ok) {
        return ok.error();
      }
      merged.name = std::move(name);
      tool_run = kNoRun;
      continue;
    }
    tool_run = kNoRun;
    ir::Message msg;
    msg.name = std::move(name);
    if (is_system) {
      msg.role = ir::Role::kSystem;
      if (auto ok = decode_content(content, false, msg.content, param); !ok) {
        return ok.error();
      }
    } else if (r == "user") {
      msg.role = ir::Role::kUser;
      if (auto ok = decode_content(content, true, msg.content, param); !ok) {
        return ok.error();
      }
    } else if (r == "assistant") {
      msg.role = ir::Role::kAssistant;
      if (auto ok = decode_content(content, false, msg.content, param); !ok) {
        return ok.error();
      }
      if (const json::value* calls = field(*mo, "tool_calls")) {
        if (auto ok = decode_tool_calls(*calls, msg.content, param); !ok) {
          return ok.error();
        }
      }
    } else {
      return bad("unknown role '" + std::string(r) + "'", param);
    }
    req.messages.push_back(std::move(msg));
  }
  return {};
}

// OpenAI's wording for a value of the wrong type.
Error bad_type(const std::string& param, std::string_view expected) {
  return bad("Invalid type for '" + param + "': expected " + std::string(expected) + ".", param);
}

Error missing(const std::string& param) {
  return bad("Missing required parameter: '" + param + "'.", param);
}

// response_format {type: text | json_object | json_schema, json_schema: {name, description,
// schema, strict}}, worded the way the API rejects a malformed one.
Result<void> decode_response_format(const json::value& v, ir::ResponseFormat& out) {
  const json::object* o = v.if_object();
  if (o == nullptr) {
    return bad_type("response_format", "an object");
  }
  const json::value* type = field(*o, "type");
  if (type == nullptr) {
    return missing("response_format.type");
  }
  const std::string_view t = type->is_string() ? std::string_view(type->get_string()) : "";
  if (t == "text") {
    out.kind = ir::ResponseFormat::Kind::kText;
    return {};
  }
  if (t == "json_object") {
    out.kind = ir::ResponseFormat::Kind::kJsonObject;
    return {};
  }
  if (t != "json_schema") {
    return bad("Invalid value: '" + (type->is_string() ? std::string(t) : json::serialize(*type)) +
                   "'. Supported values are: 'text', 'json_object', and 'json_schema'.",
               "response_format.type");
  }
  const json::value* js = field(*o, "json_schema");
  if (js == nullptr) {
    return missing("response_format.json_schema");
  }
  if (!js->is_object()) {
    return bad_type("response_format.json_schema", "an object");
  }
  const json::object& j = js->get_object();
  const json::value* name = field(j, "name");
  if (name == nullptr) {
    return missing("response_format.json_schema.name");
  }
  if (!name->is_string()) {
    return bad_type("response_format.json_schema.name", "a string");
  }
  if (const json::value* d = field(j, "description")) {
    if (!d->is_string()) {
      return bad_type("response_format.json_schema.description", "a string");
    }
    out.description = std::string(d->get_string());
  }
  if (const json::value* strict = field(j, "strict")) {
    if (!strict->is_bool()) {
      return bad_type("response_format.json_schema.strict", "a boolean");
    }
    out.strict = strict->get_bool();
  }
  const json::value* schema = field(j, "schema");
  if (schema != nullptr && !schema->is_object()) {
    return bad_type("response_format.json_schema.schema", "an object");
  }
  out.name = std::string(name->get_string());
  // Without a schema the answer is constrained to JSON only: json_object for the other
  // protocols, whose schema modes all need a schema.
  out.kind = schema == nullptr ? ir::ResponseFormat::Kind::kJsonObject
                               : ir::ResponseFormat::Kind::kJsonSchema;
  if (schema != nullptr) {
    out.schema = json::serialize(*schema);
  }
  return {};
}

// Top-level fields decode_request maps into the IR, or that the ingress reads (stream_options).
bool mapped_field(std::string_view key) {
  static constexpr std::array<std::string_view, 18> kMapped = {"model",
                                                               "messages",
                                                               "tools",
                                                               "tool_choice",
                                                               "parallel_tool_calls",
                                                               "max_tokens",
                                                               "max_completion_tokens",
                                                               "temperature",
                                                               "top_p",
                                                               "stop",
                                                               "stream",
                                                               "stream_options",
                                                               "user",
                                                               "safety_identifier",
                                                               "reasoning_effort",
                                                               "response_format",
                                                               "n",
                                                               "provider_options"};
  return std::find(kMapped.begin(), kMapped.end(), key) != kMapped.end();
}

bool is_zero(const json::value& v) {
  const std::optional<double> n = codec::as_number(v);
  return n && *n == 0.0;
}

// A value that asks for nothing beyond the API's default, so leaving it out changes nothing
// (clients such as LangChain send n: 1 and zero penalties on every request).
bool asks_nothing(std::string_view key, const json::value& v) {
  if (v.is_null()) {
    return true;
  }
  if (key == "logprobs" || key == "store") {
    return v.is_bool() && !v.get_bool();
  }
  if (key == "frequency_penalty" || key == "presence_penalty" || key == "top_logprobs") {
    return is_zero(v);
  }
  if (key == "service_tier") {
    return v.is_string() && v.get_string() == "auto";
  }
  return false;
}

// What no provider but OpenAI can honour: refused in translation rather than dropped, since
// the caller would read an answer that is not what it asked for.
Result<void> refuse_untranslatable(const json::object& root) {
  auto refuse = [](std::string param, std::string what) {
    return Error(ErrorKind::kBadRequest,
                 what + " cannot be translated for this model's provider, which returns " +
                     "neither several choices nor log probabilities.")
        .with_code("unsupported_parameter")
        .with_param(std::move(param));
  };
  if (const json::value* n = field(root, "n")) {
    const std::optional<std::uint32_t> count = as_u32(*n);
    if (!count || *count == 0) {
      return bad("'n' must be an integer of at least 1", "n");
    }
    if (*count > 1) {
      return refuse("n", "'n' above 1");
    }
  }
  if (const json::value* lp = field(root, "logprobs"); lp && lp->is_bool() && lp->get_bool()) {
    return refuse("logprobs", "'logprobs'");
  }
  if (const json::value* top = field(root, "top_logprobs"); top && !is_zero(*top)) {
    return refuse("top_logprobs", "'top_logprobs'");
  }
  return {};
}

}  // namespace

Result<ir::Request> decode_request(std::string_view body, DecodeStats* stats,
                                   const DecodeOptions& options) {
  codec::SmallDocumentArena arena;
  boost::system::error_code ec;
  json::value doc = codec::parse_json(body, ec, &arena.resource);
  if (ec) {
    return bad("request body is not valid JSON: " + ec.message(), "");
  }
  const json::object* root = doc.if_object();
  if (root == nullptr) {
    return bad("request body must be a JSON object", "");
  }
  ir::Request req;
  const json::value* model = field(*root, "model");
  if (model == nullptr || !model->is_string() || model->get_string().empty()) {
    return bad("missing required parameter: 'model'", "model");
  }
  req.model = std::string(model->get_string());
  const json::value* messages = field(*root, "messages");
  if (messages == nullptr || !messages->is_array() || messages->get_array().empty()) {
    return bad("'messages' must be a non-empty array", "messages");
  }
  if (auto ok = decode_messages(messages->get_array(), req); !ok) {
    return ok.error();
  }
  // Leading system messages without content add nothing: when they are all there is, the IR
  // has no messages and no system prompt, and encode_request would send "messages":[], which
  // the upstream rejects. Found by tests/fuzz/openai_ir_request_fuzz.
  if (req.messages.empty() && req.system.empty()) {
    return bad("'messages' must contain a message with content", "messages");
  }
  if (const json::value* tools = field(*root, "tools")) {
    if (auto ok = decode_tools(*tools, req); !ok) {
      return ok.error();
    }
  }
  if (const json::value* tc = field(*root, "tool_choice")) {
    if (auto ok = decode_tool_choice(*tc, req.tool_choice); !ok) {
      return ok.error();
    }
  }
  if (const json::value* p = field(*root, "parallel_tool_calls"); p && p->is_bool()) {
    req.tool_choice.disable_parallel_tool_use = !p->get_bool();
  }
  for (std::string_view key : {"max_completion_tokens", "max_tokens"}) {
    if (const json::value* v = field(*root, key)) {
      req.max_tokens = as_u32(*v);
      if (!req.max_tokens) {
        return bad("'" + std::string(key) + "' must be a non-negative integer", std::string(key));
      }
      break;
    }
  }
  using Slot = std::pair<const char*, std::optional<double>*>;
  for (auto [key, slot] : {Slot{"temperature", &req.temperature}, Slot{"top_p", &req.top_p}}) {
    if (const json::value* v = field(*root, key)) {
      *slot = codec::as_number(*v);
      if (!*slot) {
        return bad(std::string("'") + key + "' must be a number", key);
      }
    }
  }
  if (const json::value* stop = field(*root, "stop")) {
    if (stop->is_string()) {
      req.stop.emplace_back(stop->get_string());
    } else if (stop->is_array()) {
      for (const json::value& s : stop->get_array()) {
        if (!s.is_string()) {
          return bad("'stop' must be a string or an array of strings", "stop");
        }
        req.stop.emplace_back(s.get_string());
      }
    } else {
      return bad("'stop' must be a string or an array of strings", "stop");
    }
  }
  if (const json::value* s = field(*root, "stream")) {
    if (!s->is_bool()) {
      return bad("'stream' must be a boolean", "stream");
    }
    req.stream = s->get_bool();
  }
  for (std::string_view key : {"user", "safety_identifier"}) {
    if (const json::value* u = field(*root, key); u && u->is_string()) {
      req.user = std::string(u->get_string());
      break;
    }
  }
  if (const json::value* e = field(*root, "reasoning_effort"); e && e->is_string()) {
    req.reasoning.enabled = true;
    req.reasoning.effort = std::string(e->get_string());
  }
  if (const json::value* f = field(*root, "response_format")) {
    if (auto ok = decode_response_format(*f, req.response_format); !ok) {
      return ok.error();
    }
  }
  if (auto ok = refuse_untranslatable(*root); !ok) {
    return ok.error();
  }
  for (const json::key_value_pair& kv : *root) {
    const std::string_view key(kv.key().data(), kv.key().size());
    if (mapped_field(key) || asks_nothing(key, kv.value())) {
      continue;
    }
    if (options.strict) {
      return Error(ErrorKind::kBadRequest,
                   "Unsupported parameter: '" + std::string(key) +
                       "' is not supported with this model's provider (the gateway translates "
                       "the request and would have to leave it out; server.strict_fields is on).")
          .with_code("unsupported_parameter")
          .with_param(std::string(key));
    }
    if (stats != nullptr) {
      ++stats->ignored_fields;
    }
  }
  return req;
}

}  // namespace sluice::protocol::openai_chat
