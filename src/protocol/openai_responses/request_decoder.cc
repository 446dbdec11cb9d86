#include "protocol/openai_responses/request_decoder.h"

#include <algorithm>
#include <limits>

#include <boost/json/monotonic_resource.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

#include "codec/data_url.h"
#include "codec/json_read.h"
#include "codec/json_writer.h"
#include "protocol/openai_responses/conventions.h"

namespace sluice::protocol::openai_responses {
namespace json = boost::json;
using ir::PartKind;

namespace {

constexpr std::string_view kEmptySchema = R"({"type":"object"})";
// A custom (freeform) tool as a function: its text is the one string argument.
constexpr std::string_view kCustomSchema =
    R"({"type":"object","properties":{"input":{"type":"string","description":"The tool's )"
    R"(free-form input text."}},"required":["input"],"additionalProperties":false})";
// Tools the API runs itself (hosted tools): the IR has no server tools, so a translated request
// leaves them out (counted) rather than failing the turn. Dated variants
// (web_search_preview_2025_03_11, web_search_2025_08_26) match by prefix.
constexpr std::string_view kHostedTools[] = {"web_search",       "file_search", "code_interpreter",
                                             "image_generation", "mcp",         "tool_search"};
// tool_choice as a string (ToolChoiceOptions).
constexpr std::pair<std::string_view, ir::ToolChoiceMode> kToolChoiceModes[] = {
    {"auto", ir::ToolChoiceMode::kAuto},
    {"none", ir::ToolChoiceMode::kNone},
    {"required", ir::ToolChoiceMode::kRequired}};

Error bad(std::string message, std::string param) {
  return Error(ErrorKind::kBadRequest, std::move(message)).with_param(std::move(param));
}

Error bad_type(const std::string& param, std::string_view expected) {
  return bad("Invalid type for '" + param + "': expected " + std::string(expected) + ".", param);
}

const json::value* field(const json::object& o, std::string_view key) {
  const json::value* v = o.if_contains(key);
  return (v == nullptr || v->is_null()) ? nullptr : v;
}

std::string text_of(const json::value& v) { return std::string(v.get_string()); }

// One content part of a message or function_call_output: input_text, input_image, and in
// assistant messages output_text and refusal.
Result<ir::ContentPart> decode_part(const json::value& v, bool assistant,
                                    const std::string& param) {
  const json::object* o = v.if_object();
  const json::value* type = o != nullptr ? field(*o, "type") : nullptr;
  if (type == nullptr || !type->is_string()) {
    return bad("Missing required parameter: '" + param + ".type'.", param + ".type");
  }
  const std::string_view t = type->get_string();
  const bool text_like = t == "input_text" || (assistant && (t == "output_text" || t == "refusal"));
  if (text_like) {
    const char* key = t == "refusal" ? "refusal" : "text";
    const json::value* text = field(*o, key);
    if (text == nullptr || !text->is_string()) {
      return bad_type(param + "." + key, "a string");
    }
    return ir::ContentPart::make_text(text_of(*text));
  }
  if (t == "input_image" && !assistant) {
    const json::value* url = field(*o, "image_url");
    if (url == nullptr || !url->is_string()) {
      return bad(
          "Image inputs by file_id cannot be translated for this model's upstream; send "
          "an image_url ('" +
              param + "').",
          param + ".image_url");
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
    if (const json::value* d = field(*o, "detail"); d != nullptr && d->is_string()) {
      part.detail = text_of(*d);
    }
    return part;
  }
  return bad("Content of type '" + std::string(t) +
                 "' cannot be translated for this model's "
                 "upstream ('" +
                 param + "').",
             param + ".type");
}

Result<void> decode_content(const json::value& content, bool assistant,
                            std::vector<ir::ContentPart>& out, const std::string& param) {
  if (content.is_string()) {
    out.push_back(ir::ContentPart::make_text(text_of(content)));
    return {};
  }
  if (!content.is_array()) {
    return bad_type(param, "a string or an array of content parts");
  }
  const json::array& parts = content.get_array();
  for (std::size_t i = 0; i < parts.size(); ++i) {
    auto part = decode_part(parts[i], assistant, param + "[" + std::to_string(i) + "]");
    if (!part) {
      return std::move(part).error();
    }
    out.push_back(std::move(*part));
  }
  return {};
}

Result<std::string_view> required_string(const json::object& o, std::string_view key,
                                         const std::string& param) {
  const json::value* v = field(o, key);
  if (v == nullptr) {
    return bad("Missing required parameter: '" + param + "." + std::string(key) + "'.",
               param + "." + std::string(key));
  }
  if (!v->is_string()) {
    return bad_type(param + "." + std::string(key), "a string");
  }
  return std::string_view(v->get_string());
}

// Builds the IR conversation from input items: consecutive assistant items share one message,
// consecutive function_call_output items another.
class InputBuilder {
 public:
  InputBuilder(ir::Request& req, const ToolNames& names) : req_(req), names_(names) {}

  Result<void> item(const json::value& v, const std::string& param) {
    const json::object* o = v.if_object();
    if (o == nullptr) {
      return bad_type(param, "an object");
    }
    std::string_view type = "message";
    if (const json::value* t = field(*o, "type")) {
      if (!t->is_string()) {
        return bad_type(param + ".type", "a string");
      }
      type = t->get_string();
    }
    if (type == "message") {
      return message(*o, param);
    }
    if (type == "function_call") {
      return function_call(*o, param);
    }
    if (type == "function_call_output" || type == "custom_tool_call_output") {
      return function_call_output(*o, param);
    }
    if (type == "custom_tool_call") {
      return custom_tool_call(*o, param);
    }
    if (type == "reasoning") {
      return reasoning(*o, param);
    }
    return bad("Input items of type '" + std::string(type) +
                   "' cannot be translated for this "
                   "model's upstream ('" +
                   param + "').",
               param + ".type");
  }

 private:
  Result<void> message(const json::object& o, const std::string& param) {
    auto role = required_string(o, "role", param);
    if (!role) {
      return std::move(role).error();
    }
    const json::value* content = field(o, "content");
    if (content == nullptr) {
      return bad("Missing required parameter: '" + param + ".content'.", param + ".content");
    }
    const std::string cparam = param + ".content";
    const bool system = *role == "system" || *role == "developer";
    if (system && req_.messages.empty()) {
      return decode_content(*content, false, req_.system, cparam);
    }
    if (*role == "assistant") {
      return decode_content(*content, true, assistant().content, cparam);
    }
    if (!system && *role != "user") {
      return bad("Invalid value: '" + std::string(*role) +
                     "'. Supported values are: 'user', 'assistant', 'system', and 'developer'.",
                 param + ".role");
    }
    ir::Message& m = fresh(system ? ir::Role::kSystem : ir::Role::kUser);
    return decode_content(*content, false, m.content, cparam);
  }

  // `namespace` (a tool of a namespace tool): the IR name the request's tools give it.
  Result<std::string> call_name(const json::object& o, const std::string& param) {
    auto name = required_string(o, "name", param);
    if (!name) {
      return std::move(name).error();
    }
    std::string_view space;
    if (const json::value* ns = field(o, "namespace")) {
      if (!ns->is_string()) {
        return bad_type(param + ".namespace", "a string");
      }
      space = ns->get_string();
    }
    return names_.flat_name(space, *name);
  }

  // A call item's part (call_id, name with its namespace flattened) and its `payload_field`
  // (function_call arguments, custom_tool_call input).
  struct CallItem {
    ir::ContentPart part;
    std::string_view payload;
  };
  Result<CallItem> call_item(const json::object& o, const std::string& param,
                             std::string_view payload_field) {
    auto call_id = required_string(o, "call_id", param);
    if (!call_id) {
      return std::move(call_id).error();
    }
    auto name = call_name(o, param);
    if (!name) {
      return std::move(name).error();
    }
    auto payload = required_string(o, payload_field, param);
    if (!payload) {
      return std::move(payload).error();
    }
    CallItem item;
    item.part.kind = PartKind::kToolCall;
    item.part.id = std::string(*call_id);
    item.part.name = std::move(*name);
    item.payload = *payload;
    return item;
  }

  Result<void> function_call(const json::object& o, const std::string& param) {
    auto item = call_item(o, param, "arguments");
    if (!item) {
      return std::move(item).error();
    }
    item->part.arguments = item->payload.empty() ? std::string("{}") : std::string(item->payload);
    assistant().content.push_back(std::move(item->part));
    return {};
  }

  // A freeform tool's call: its text becomes the one argument of the function the tool is.
  Result<void> custom_tool_call(const json::object& o, const std::string& param) {
    auto item = call_item(o, param, "input");
    if (!item) {
      return std::move(item).error();
    }
    codec::JsonWriter(item->part.arguments).raw(R"({"input":)").string(item->payload).ch('}');
    assistant().content.push_back(std::move(item->part));
    return {};
  }

  Result<void> function_call_output(const json::object& o, const std::string& param) {
    auto call_id = required_string(o, "call_id", param);
    if (!call_id) {
      return std::move(call_id).error();
    }
    const json::value* output = field(o, "output");
    if (output == nullptr) {
      return bad("Missing required parameter: '" + param + ".output'.", param + ".output");
    }
    ir::ContentPart result;
    result.kind = PartKind::kToolResult;
    result.id = std::string(*call_id);
    if (auto ok = decode_content(*output, false, result.parts, param + ".output"); !ok) {
      return ok;
    }
    if (open_ != Open::kToolResults) {
      fresh(ir::Role::kUser);
      open_ = Open::kToolResults;
    }
    req_.messages.back().content.push_back(std::move(result));
    return {};
  }

  Result<void> reasoning(const json::object& o, const std::string& param) {
    // Stateless clients send reasoning back without its id (Codex never serializes it:
    // codex-rs/protocol/src/models.rs, `id` is skip_serializing); the encrypted_content is what
    // other protocols' upstreams need (an Anthropic signature). A given id must name something.
    std::string_view id;
    if (const json::value* given = field(o, "id")) {
      if (!given->is_string()) {
        return bad_type(param + ".id", "a string");
      }
      id = given->get_string();
      if (id.empty()) {
        // The id is how a Responses upstream finds the reasoning it produced: an empty one
        // names nothing.
        return bad("Invalid '" + param +
                       ".id': empty string. A reasoning item needs the id it "
                       "was returned with.",
                   param + ".id");
      }
    }
    if (!read_reasoning_item(o, id, assistant().content)) {
      return bad(
          "Invalid reasoning item: 'summary' must be an array of {\"type\": "
          "\"summary_text\", \"text\"} objects and 'encrypted_content' a string ('" +
              param + "').",
          param);
    }
    return {};
  }

  enum class Open : std::uint8_t { kNone, kAssistant, kToolResults };

  ir::Message& fresh(ir::Role role) {
    ir::Message& m = req_.messages.emplace_back();
    m.role = role;
    open_ = Open::kNone;
    return m;
  }
  ir::Message& assistant() {
    if (open_ != Open::kAssistant) {
      fresh(ir::Role::kAssistant);
      open_ = Open::kAssistant;
    }
    return req_.messages.back();
  }

  ir::Request& req_;
  const ToolNames& names_;
  Open open_ = Open::kNone;
};

// OpenAI's answer to a field the gateway would leave out when strict (server.strict_fields).
Error unsupported(const std::string& param) {
  return Error(ErrorKind::kBadRequest,
               "Unsupported parameter: '" + param +
                   "' is not supported with this model's provider (the gateway translates the "
                   "request and would have to leave it out; server.strict_fields is on).")
      .with_code("unsupported_parameter")
      .with_param(param);
}

bool hosted_tool(std::string_view type) {
  for (std::string_view hosted : kHostedTools) {
    if (type == hosted ||
        (type.starts_with(hosted) && type.size() > hosted.size() && type[hosted.size()] == '_')) {
      return true;
    }
  }
  return false;
}

// What decode_tools found besides the IR tools.
struct ToolsFound {
  ToolNames names;
  std::uint32_t dropped = 0;
  std::string dropped_types;  // comma-separated, each once
};

// One function or custom tool, at the top level (`space` empty) or in a namespace.
Result<void> decode_tool(const json::object& o, std::string_view type, std::string_view space,
                         const std::string& param, ir::Request& req, ToolsFound& found) {
  auto name = required_string(o, "name", param);
  if (!name) {
    return std::move(name).error();
  }
  ir::Tool tool;
  if (const json::value* d = field(o, "description"); d != nullptr && d->is_string()) {
    tool.description = text_of(*d);
  }
  const bool custom = type == "custom";
  if (custom) {
    // format {type: text} (any text) or {type: grammar, syntax: lark | regex, definition}: the
    // function form cannot enforce a grammar, so the model is shown it.
    tool.parameters = std::string(kCustomSchema);
    if (const json::value* f = field(o, "format")) {
      const json::object* format = f->if_object();
      if (format == nullptr) {
        return bad_type(param + ".format", "an object");
      }
      const json::value* ft = field(*format, "type");
      if (ft != nullptr && ft->is_string() && ft->get_string() == "grammar") {
        const json::value* syntax = field(*format, "syntax");
        const json::value* definition = field(*format, "definition");
        if (definition == nullptr || !definition->is_string()) {
          return bad_type(param + ".format.definition", "a string");
        }
        const std::string syntax_name =
            syntax != nullptr && syntax->is_string() ? text_of(*syntax) : std::string("lark");
        if (!tool.description.empty()) {
          tool.description += "\n\n";
        }
        tool.description +=
            "The `input` argument is the tool's free-form text (not JSON); it must "
            "match this " +
            syntax_name + " grammar:\n" + text_of(*definition);
      } else if (ft != nullptr && (!ft->is_string() || ft->get_string() != "text")) {
        return bad("Invalid value for '" + param +
                       ".format.type'. Supported values are: 'text' and 'grammar'.",
                   param + ".format.type");
      }
    }
  } else if (const json::value* p = field(o, "parameters")) {
    if (!p->is_object()) {
      return bad_type(param + ".parameters", "an object");
    }
    tool.parameters = json::serialize(*p);
  } else {
    tool.parameters = std::string(kEmptySchema);
  }
  found.names.add(std::string(space), std::string(*name), custom);
  req.tools.push_back(std::move(tool));
  return {};
}

// tools: function and custom tools, namespace tools (their tools flattened, tool_names.h),
// hosted tools left out (counted; refused when strict).
Result<void> decode_tools(const json::value& tools, ir::Request& req, ToolsFound& found,
                          bool strict) {
  if (!tools.is_array()) {
    return bad_type("tools", "an array");
  }
  const json::array& list = tools.get_array();
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string param = "tools[" + std::to_string(i) + "]";
    const json::object* o = list[i].if_object();
    const json::value* type = o != nullptr ? field(*o, "type") : nullptr;
    if (type == nullptr || !type->is_string()) {
      return bad("Missing required parameter: '" + param + ".type'.", param + ".type");
    }
    const std::string_view t = type->get_string();
    if (t == "function" || t == "custom") {
      if (auto ok = decode_tool(*o, t, "", param, req, found); !ok) {
        return ok;
      }
      continue;
    }
    if (t == "namespace") {
      auto space = required_string(*o, "name", param);
      if (!space) {
        return std::move(space).error();
      }
      if (space->empty()) {
        return bad("Invalid '" + param + ".name': empty string.", param + ".name");
      }
      const json::value* inner = field(*o, "tools");
      if (inner == nullptr || !inner->is_array()) {
        return bad_type(param + ".tools", "an array");
      }
      const json::array& members = inner->get_array();
      for (std::size_t j = 0; j < members.size(); ++j) {
        const std::string mparam = param + ".tools[" + std::to_string(j) + "]";
        const json::object* m = members[j].if_object();
        const json::value* mt = m != nullptr ? field(*m, "type") : nullptr;
        const std::string_view mtype =
            mt != nullptr && mt->is_string() ? std::string_view(mt->get_string()) : "";
        if (mtype != "function" && mtype != "custom") {
          return bad("Invalid value for '" + mparam +
                         ".type': a namespace holds function and custom tools.",
                     mparam + ".type");
        }
        if (auto ok = decode_tool(*m, mtype, *space, mparam, req, found); !ok) {
          return ok;
        }
      }
      continue;
    }
    if (hosted_tool(t)) {
      if (strict) {
        return unsupported(param);
      }
      ++found.dropped;
      const bool listed =
          ("," + found.dropped_types + ",").find("," + std::string(t) + ",") != std::string::npos;
      if (!listed) {
        if (!found.dropped_types.empty()) {
          found.dropped_types += ',';
        }
        found.dropped_types += t;
      }
      continue;
    }
    return bad("Tools of type '" + std::string(t) +
                   "' cannot be translated for this model's upstream; only function, custom and "
                   "namespace tools can ('" +
                   param + "').",
               param + ".type");
  }
  found.names.assign();
  for (std::size_t k = 0; k < req.tools.size(); ++k) {
    req.tools[k].name = found.names.tools()[k].flat;
  }
  return {};
}

Result<void> decode_tool_choice(const json::value& tc, ir::ToolChoice& choice) {
  if (tc.is_string()) {
    for (const auto& [text, mode] : kToolChoiceModes) {
      if (tc.get_string() == text) {
        choice.mode = mode;
        return {};
      }
    }
    return bad("Invalid value: '" + text_of(tc) +
                   "'. Supported values are: 'none', 'auto', and 'required'.",
               "tool_choice");
  }
  const json::object* o = tc.if_object();
  const json::value* type = o != nullptr ? field(*o, "type") : nullptr;
  if (type == nullptr || !type->is_string() ||
      (type->get_string() != "function" && type->get_string() != "custom")) {
    return bad(
        "tool_choice other than none, auto, required, {\"type\": \"function\"} and "
        "{\"type\": \"custom\"} cannot be translated for this model's upstream.",
        "tool_choice");
  }
  auto name = required_string(*o, "name", "tool_choice");
  if (!name) {
    return std::move(name).error();
  }
  choice.mode = ir::ToolChoiceMode::kNamed;
  choice.name = std::string(*name);  // a top-level tool: its IR name is its own
  return {};
}

Result<void> decode_reasoning(const json::value& v, ir::Reasoning& reasoning) {
  const json::object* o = v.if_object();
  if (o == nullptr) {
    return bad_type("reasoning", "an object");
  }
  reasoning.enabled = true;
  for (auto [key, target] :
       {std::pair{"effort", &reasoning.effort}, std::pair{"summary", &reasoning.summary}}) {
    if (const json::value* s = field(*o, key)) {
      if (!s->is_string()) {
        return bad_type(std::string("reasoning.") + key, "a string");
      }
      *target = text_of(*s);
    }
  }
  if (reasoning.summary.empty()) {  // the deprecated spelling
    if (const json::value* s = field(*o, "generate_summary"); s != nullptr && s->is_string()) {
      reasoning.summary = text_of(*s);
    }
  }
  return {};
}

// Top-level fields read into the IR or handled by the ingress (not counted as ignored).
bool known_field(std::string_view key) {
  static constexpr std::string_view kKnown[] = {"model",
                                                "input",
                                                "instructions",
                                                "tools",
                                                "tool_choice",
                                                "parallel_tool_calls",
                                                "max_output_tokens",
                                                "temperature",
                                                "top_p",
                                                "reasoning",
                                                "stream",
                                                "store",
                                                "user",
                                                "safety_identifier",
                                                "stream_options",
                                                "previous_response_id",
                                                "text",
                                                "provider_options"};
  for (std::string_view k : kKnown) {
    if (k == key) {
      return true;
    }
  }
  return false;
}

// text {format: {type: text | json_object | json_schema, name, schema, description, strict},
// verbosity}: format -> response_format; verbosity has no place in the IR (`ignored`).
Result<void> decode_text(const json::value& v, ir::ResponseFormat& out, bool strict,
                         std::uint32_t& ignored) {
  const json::object* o = v.if_object();
  if (o == nullptr) {
    return bad_type("text", "an object");
  }
  for (const json::key_value_pair& kv : *o) {
    if (kv.key() != "format" && !kv.value().is_null()) {
      if (strict) {
        return unsupported("text." + std::string(kv.key()));
      }
      ++ignored;
    }
  }
  const json::value* format = field(*o, "format");
  if (format == nullptr) {
    return {};
  }
  const json::object* f = format->if_object();
  if (f == nullptr) {
    return bad_type("text.format", "an object");
  }
  const json::value* type = field(*f, "type");
  if (type == nullptr) {
    return bad("Missing required parameter: 'text.format.type'.", "text.format.type");
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
    return bad("Invalid value: '" + std::string(t) +
                   "'. Supported values are: 'text', 'json_object', and 'json_schema'.",
               "text.format.type");
  }
  for (const char* key : {"name", "schema"}) {
    if (field(*f, key) == nullptr) {
      return bad("Missing required parameter: 'text.format." + std::string(key) + "'.",
                 "text.format." + std::string(key));
    }
  }
  const json::value& name = *field(*f, "name");
  const json::value& schema = *field(*f, "schema");
  if (!name.is_string()) {
    return bad_type("text.format.name", "a string");
  }
  if (!schema.is_object()) {
    return bad_type("text.format.schema", "an object");
  }
  if (const json::value* d = field(*f, "description")) {
    if (!d->is_string()) {
      return bad_type("text.format.description", "a string");
    }
    out.description = text_of(*d);
  }
  if (const json::value* st = field(*f, "strict")) {
    if (!st->is_bool()) {
      return bad_type("text.format.strict", "a boolean");
    }
    out.strict = st->get_bool();
  }
  out.kind = ir::ResponseFormat::Kind::kJsonSchema;
  out.name = text_of(name);
  out.schema = json::serialize(schema);
  return {};
}

// A value that asks for nothing beyond the API's default, so leaving it out changes nothing.
bool asks_nothing(std::string_view key, const json::value& v) {
  if (v.is_null()) {
    return true;
  }
  if (key == "truncation") {
    return v.is_string() && v.get_string() == "disabled";
  }
  if (key == "service_tier") {
    return v.is_string() && v.get_string() == "auto";
  }
  if (key == "include") {
    // A translated answer always carries the upstream's signed reasoning as encrypted_content
    // (response.h), so asking for it asks nothing more; other includes are not produced.
    if (!v.is_array()) {
      return false;
    }
    const json::array& a = v.get_array();
    return std::all_of(a.begin(), a.end(), [](const json::value& e) {
      return e.is_string() && e.get_string() == "reasoning.encrypted_content";
    });
  }
  if (key == "prompt_cache_key" || key == "client_metadata") {
    // Hints that change nothing in the answer: a routing key for OpenAI's prompt cache, and the
    // client's own tags (Codex sends both on every turn). Leaving them out loses nothing the
    // caller can observe.
    return true;
  }
  if (key == "background") {
    return v.is_bool() && !v.get_bool();
  }
  return false;
}

Result<void> decode_root(const json::object& root, ir::Request& req, ToolsFound& found,
                         bool strict) {
  const json::value* model = field(root, "model");
  if (model == nullptr || !model->is_string() || model->get_string().empty()) {
    return bad("Missing required parameter: 'model'.", "model");
  }
  req.model = text_of(*model);
  if (const json::value* instructions = field(root, "instructions")) {
    if (!instructions->is_string()) {
      return bad_type("instructions", "a string");
    }
    req.system.push_back(ir::ContentPart::make_text(text_of(*instructions)));
  }
  // Tools first: previous turns' calls of namespaced and custom tools take the names they give.
  if (const json::value* tools = field(root, "tools")) {
    if (auto ok = decode_tools(*tools, req, found, strict); !ok) {
      return ok;
    }
  }
  if (const json::value* input = field(root, "input")) {
    if (input->is_string()) {
      req.messages.emplace_back().content.push_back(ir::ContentPart::make_text(text_of(*input)));
    } else if (input->is_array()) {
      InputBuilder builder(req, found.names);
      const json::array& items = input->get_array();
      for (std::size_t i = 0; i < items.size(); ++i) {
        if (auto ok = builder.item(items[i], "input[" + std::to_string(i) + "]"); !ok) {
          return ok;
        }
      }
    } else {
      return bad_type("input", "a string or an array of input items");
    }
  }
  if (req.messages.empty()) {
    // Every upstream protocol needs a turn to answer; Responses itself accepts a bare
    // instructions-only request, which cannot be translated.
    return bad(
        "'input' must contain at least one item to be translated for this model's "
        "upstream.",
        "input");
  }
  if (const json::value* tc = field(root, "tool_choice")) {
    if (auto ok = decode_tool_choice(*tc, req.tool_choice); !ok) {
      return ok;
    }
  }
  if (const json::value* p = field(root, "parallel_tool_calls")) {
    if (!p->is_bool()) {
      return bad_type("parallel_tool_calls", "a boolean");
    }
    req.tool_choice.disable_parallel_tool_use = !p->get_bool();
  }
  if (const json::value* m = field(root, "max_output_tokens")) {
    auto n = codec::as_count(*m);
    if (!n || *n > std::numeric_limits<std::uint32_t>::max()) {
      return bad_type("max_output_tokens", "a non-negative integer");
    }
    req.max_tokens = static_cast<std::uint32_t>(*n);
  }
  using Slot = std::pair<const char*, std::optional<double>*>;
  for (auto [key, slot] : {Slot{"temperature", &req.temperature}, Slot{"top_p", &req.top_p}}) {
    if (const json::value* v = field(root, key)) {
      *slot = codec::as_number(*v);
      if (!*slot) {
        return bad_type(key, "a number");
      }
    }
  }
  if (const json::value* r = field(root, "reasoning")) {
    if (auto ok = decode_reasoning(*r, req.reasoning); !ok) {
      return ok;
    }
  }
  if (const json::value* s = field(root, "stream")) {
    if (!s->is_bool()) {
      return bad_type("stream", "a boolean");
    }
    req.stream = s->get_bool();
  }
  // Not in the IR, but checked as the ingress's light decode checks them.
  if (const json::value* s = field(root, "store"); s != nullptr && !s->is_bool()) {
    return bad_type("store", "a boolean");
  }
  if (const json::value* p = field(root, "previous_response_id"); p != nullptr && !p->is_string()) {
    return bad_type("previous_response_id", "a string");
  }
  for (const char* key : {"user", "safety_identifier"}) {
    if (const json::value* u = field(root, key); u != nullptr && u->is_string()) {
      req.user = text_of(*u);
      break;
    }
  }
  return {};
}

}  // namespace

Result<ir::Request> decode_request(std::string_view body, DecodeStats* stats,
                                   const DecodeOptions& options) {
  codec::SmallDocumentArena arena;
  boost::system::error_code ec;
  json::value doc = codec::parse_json(body, ec, &arena.resource, kMaxJsonDepth);
  if (ec) {
    return bad("We could not parse the JSON body of your request: " + ec.message(), "");
  }
  const json::object* root = doc.if_object();
  if (root == nullptr) {
    return bad("The request body must be a JSON object.", "");
  }
  ir::Request req;
  ToolsFound found;
  if (auto ok = decode_root(*root, req, found, options.strict); !ok) {
    return ok.error();
  }
  std::uint32_t ignored = 0;
  if (const json::value* text = field(*root, "text")) {
    if (auto ok = decode_text(*text, req.response_format, options.strict, ignored); !ok) {
      return ok.error();
    }
  }
  for (const json::key_value_pair& kv : *root) {
    const std::string_view key(kv.key().data(), kv.key().size());
    if (known_field(key) || asks_nothing(key, kv.value())) {
      continue;
    }
    if (options.strict) {
      return unsupported(std::string(key));
    }
    ++ignored;
  }
  if (stats != nullptr) {
    stats->ignored_fields = ignored;
    stats->dropped_tools = found.dropped;
    stats->dropped_tool_types = std::move(found.dropped_types);
    stats->tool_names = std::move(found.names);
  }
  return req;
}

ToolNames decode_tool_names(std::string_view body) {
  codec::SmallDocumentArena arena;
  boost::system::error_code ec;
  json::value doc = codec::parse_json(body, ec, &arena.resource, kMaxJsonDepth);
  const json::object* root = ec ? nullptr : doc.if_object();
  const json::value* tools = root != nullptr ? field(*root, "tools") : nullptr;
  ToolsFound found;
  ir::Request scratch;
  if (tools == nullptr || !decode_tools(*tools, scratch, found, false)) {
    return {};
  }
  return std::move(found.names);
}

}  // namespace sluice::protocol::openai_responses
