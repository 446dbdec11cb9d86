#include "protocol/gemini/request_decoder.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <boost/json/monotonic_resource.hpp>

#include "codec/json_compact.h"
#include "codec/json_read.h"
#include "protocol/gemini/conventions.h"
#include "protocol/gemini/parts.h"
#include "protocol/gemini/wire_json.h"

namespace sluice::protocol::gemini {
namespace json = boost::json;
using wire::member;
using wire::string_member;

namespace {

constexpr std::string_view kEmptySchema = R"({"type":"object"})";

using wire::index;
using wire::join;
using wire::untranslatable;

Error bad(std::string path, std::string_view problem) {
  return wire::request_error(std::move(path), problem);
}

// proto3 JSON names are lowerCamelCase; the API also takes the snake_case field names.
std::string camel_of(std::string_view key) {
  std::string out;
  out.reserve(key.size());
  bool upper = false;
  for (char c : key) {
    if (c == '_') {
      upper = true;
    } else {
      out.push_back(upper && c >= 'a' && c <= 'z' ? static_cast<char>(c - 'a' + 'A') : c);
      upper = false;
    }
  }
  return out;
}

// camel_of without a copy for the usual key, which has no '_': the key itself, else its
// conversion kept in `scratch`.
std::string_view camel_view(std::string_view key, std::string& scratch) {
  if (key.find('_') == std::string_view::npos) {
    return key;
  }
  scratch = camel_of(key);
  return scratch;
}

bool one_of(std::string_view key, std::span<const std::string_view> names) {
  for (std::string_view n : names) {
    if (n == key) {
      return true;
    }
  }
  return false;
}

// Integers, and floats without a fraction (1024.0); values beyond int64 saturate.
std::optional<std::int64_t> integer(const json::value& v) {
  if (v.is_int64()) {
    return v.get_int64();
  }
  if (v.is_uint64()) {
    return std::numeric_limits<std::int64_t>::max();
  }
  if (v.is_double()) {
    const double d = v.get_double();
    if (!std::isfinite(d) || std::trunc(d) != d) {
      return std::nullopt;
    }
    if (std::fabs(d) >= 9.2e18) {
      return d > 0 ? std::numeric_limits<std::int64_t>::max()
                   : std::numeric_limits<std::int64_t>::min();
    }
    return static_cast<std::int64_t>(d);
  }
  return std::nullopt;
}

Result<std::uint32_t> count(const json::value& v, std::string path) {
  auto n = integer(v);
  if (!n) {
    return bad(std::move(path), "Invalid value, expected an integer");
  }
  if (*n < 0 || *n > std::numeric_limits<std::uint32_t>::max()) {
    return bad(std::move(path), "Invalid value, out of range");
  }
  return static_cast<std::uint32_t>(*n);
}

// Gemini's Schema (an OpenAPI 3.0 subset) as JSON Schema, which the IR and the other protocols
// carry, in place: type names lower-cased (OBJECT -> object), `nullable: true` -> "null" added
// to the type (or to anyOf), propertyOrdering dropped (it orders Gemini's own output only).
// Only keywords that hold schemas are walked, so a property named "type" or "nullable" is
// left alone.
void to_json_schema(json::value& v) {
  static constexpr std::array<std::string_view, 7> kTypes = {
      "STRING", "NUMBER", "INTEGER", "BOOLEAN", "ARRAY", "OBJECT", "NULL"};
  json::object* o = v.if_object();
  if (o == nullptr) {
    return;
  }
  bool nullable = false;
  if (const json::value* n = o->if_contains("nullable")) {
    nullable = n->is_bool() && n->get_bool();
    o->erase("nullable");
  }
  o->erase("propertyOrdering");
  o->erase("property_ordering");
  if (json::value* type = o->if_contains("type");
      type != nullptr && type->is_string() &&
      one_of(std::string_view(type->get_string()), kTypes)) {
    std::string lower(type->get_string().data(), type->get_string().size());
    for (char& c : lower) {
      c = static_cast<char>(c - 'A' + 'a');
    }
    *type = lower;
  }
  for (json::key_value_pair& kv : *o) {
    const std::string_view key(kv.key().data(), kv.key().size());
    json::value& value = kv.value();
    if (key == "properties" || key == "$defs" || key == "definitions") {
      if (json::object* map = value.if_object()) {
        for (json::key_value_pair& p : *map) {
          to_json_schema(p.value());
        }
      }
    } else if (key == "items" || key == "additionalProperties" || key == "not") {
      to_json_schema(value);
    } else if (key == "anyOf" || key == "any_of" || key == "oneOf" || key == "allOf" ||
               key == "prefixItems") {
      if (json::array* list = value.if_array()) {
        for (json::value& e : *list) {
          to_json_schema(e);
        }
      }
    }
  }
  if (!nullable) {
    return;
  }
  if (json::value* type = o->if_contains("type"); type != nullptr && type->is_string()) {
    if (type->get_string() != "null") {
      json::array both;
      both.emplace_back(type->get_string());
      both.emplace_back("null");
      *type = std::move(both);
    }
  } else if (json::value* any = o->if_contains("anyOf"); any != nullptr && any->is_array()) {
    json::object null_type;
    null_type["type"] = "null";
    any->get_array().emplace_back(std::move(null_type));
  }
}

struct Call {
  std::size_t content;  // index of the Content it is in
  std::string name;
  std::string id;
  std::size_t answers = 0;  // functionResponses paired with it so far
};

class RequestDecoder final : public parts::CallIds {
 public:
  RequestDecoder(DecodeStats* stats, const DecodeOptions& options)
      : stats_(stats), options_(options) {}

  Result<void> decode(const json::object& root, ir::Request& out) {
    if (auto r = contents(root, out); !r) {
      return r;
    }
    if (auto r = system(root, out); !r) {
      return r;
    }
    if (auto r = tools(root, out); !r) {
      return r;
    }
    if (auto r = tool_config(root, out); !r) {
      return r;
    }
    if (auto r = generation_config(root, out); !r) {
      return r;
    }
    if (member(root, "cachedContent") != nullptr) {
      return untranslatable("cached_content", "cachedContent");
    }
    static constexpr std::array<std::string_view, 9> kKnown = {
        "contents",   "systemInstruction", "tools",
        "toolConfig", "generationConfig",  "cachedContent",
        "model",      "safetySettings",    "providerOptions"};
    std::string scratch;
    for (const json::key_value_pair& kv : root) {
      const std::string_view key =
          camel_view(std::string_view(kv.key().data(), kv.key().size()), scratch);
      if ((!one_of(key, kKnown) || key == "safetySettings") && !kv.value().is_null()) {
        if (auto r = ignore("", key); !r) {
          return r;
        }
      }
    }
    return {};
  }

  std::string call_id(std::string_view given, std::size_t part, std::string_view name) override {
    std::string id = given.empty() ? request_call_id(content_, part) : std::string(given);
    calls_.push_back({content_, std::string(name), id, 0});
    return id;
  }

  // The call a response answers: by id when it has one, else the first unanswered call of its
  // name in the latest Content with calls before it, then in earlier ones (latest first); when
  // every call of that name has an answer, the same search among those answered least often.
  Result<std::string> response_id(std::string_view given, std::string_view name,
                                  const std::string& path) override {
    std::size_t fewest = SIZE_MAX;
    for (const Call& call : calls_) {
      if (given.empty() ? call.name == name : call.id == given) {
        fewest = std::min(fewest, call.answers);
      }
    }
    std::size_t end = calls_.size();
    while (fewest != SIZE_MAX && end > 0) {
      std::size_t begin = end - 1;
      while (begin > 0 && calls_[begin - 1].content == calls_[end - 1].content) {
        --begin;
      }
      for (std::size_t i = begin; i < end; ++i) {
        Call& call = calls_[i];
        if (call.answers == fewest && (given.empty() ? call.name == name : call.id == given)) {
          ++call.answers;
          return call.id;
        }
      }
      end = begin;
    }
    if (!given.empty()) {
      return std::string(given);
    }
    return bad(path, "function response '" + std::string(name) +
                         "' answers no functionCall of that name before it");
  }

 private:
  // A field the IR cannot carry (`camel` under `base`): counted, or an error when strict.
  Result<void> ignore(std::string_view base, std::string_view camel) {
    if (options_.strict) {
      std::string snake;
      for (char c : camel) {
        if (c >= 'A' && c <= 'Z') {
          snake.push_back('_');
          c = static_cast<char>(c - 'A' + 'a');
        }
        snake.push_back(c);
      }
      return untranslatable(base.empty() ? snake : join(base, snake), camel);
    }
    if (stats_ != nullptr) {
      ++stats_->ignored_fields;
    }
    return {};
  }

  Result<void> contents(const json::object& root, ir::Request& out) {
    const json::value* v = member(root, "contents");
    if (v == nullptr) {
      return bad("contents", "contents is not specified");
    }
    if (!v->is_array() || v->get_array().empty()) {
      return bad("contents", "contents is not specified");
    }
    const json::array& arr = v->get_array();
    out.messages.resize(arr.size());
    for (std::size_t i = 0; i < arr.size(); ++i) {
      const std::string path = index("contents", i);
      if (!arr[i].is_object()) {
        return bad(path, "Invalid value, expected a Content object");
      }
      const json::object& c = arr[i].get_object();
      ir::Message& m = out.messages[i];
      const std::string_view role = string_member(c, "role").value_or("");
      if (role.empty() || role == "user") {
        m.role = ir::Role::kUser;
      } else if (role == "model") {
        m.role = ir::Role::kAssistant;
      } else {
        return bad(join(path, "role"), "Please use a valid role: user, model.");
      }
      const json::value* parts = member(c, "parts");
      if (parts == nullptr) {
        return bad(join(path, "parts"), "contents.parts must not be empty.");
      }
      content_ = i;
      if (auto r = parts::read_parts(*parts, parts::Source::kCaller, join(path, "parts"), *this,
                                     m.content);
          !r) {
        return r;
      }
    }
    return {};
  }

  Result<void> system(const json::object& root, ir::Request& out) {
    const json::value* v = member(root, "systemInstruction");
    if (v == nullptr) {
      return {};
    }
    const std::string path = "system_instruction";
    if (!v->is_object()) {
      return bad(path, "Invalid value, expected a Content object");
    }
    const json::value* parts = member(v->get_object(), "parts");
    if (parts == nullptr) {
      return {};
    }
    if (!parts->is_array()) {
      return bad(join(path, "parts"), "Invalid value, expected a list of Part");
    }
    const json::array& arr = parts->get_array();
    for (std::size_t i = 0; i < arr.size(); ++i) {
      const json::value* text = arr[i].is_object() ? member(arr[i].get_object(), "text") : nullptr;
      if (text == nullptr || !text->is_string()) {
        return bad(index(join(path, "parts"), i),
                   "only text parts can be translated in a system instruction");
      }
      if (!text->get_string().empty()) {
        out.system.push_back(ir::ContentPart::make_text(std::string(text->get_string())));
      }
    }
    return {};
  }

  Result<void> tools(const json::object& root, ir::Request& out) {
    const json::value* v = member(root, "tools");
    if (v == nullptr) {
      return {};
    }
    if (!v->is_array()) {
      return bad("tools", "Invalid value, expected a list of Tool");
    }
    const json::array& arr = v->get_array();
    for (std::size_t i = 0; i < arr.size(); ++i) {
      const std::string path = index("tools", i);
      if (!arr[i].is_object()) {
        return bad(path, "Invalid value, expected a Tool object");
      }
      std::string scratch;
      for (const json::key_value_pair& kv : arr[i].get_object()) {
        const std::string_view key =
            camel_view(std::string_view(kv.key().data(), kv.key().size()), scratch);
        if (key != "functionDeclarations" && !kv.value().is_null()) {
          return untranslatable(join(path, key), key);
        }
      }
      const json::value* decls = member(arr[i].get_object(), "functionDeclarations");
      if (decls == nullptr) {
        continue;
      }
      const std::string decls_path = join(path, "function_declarations");
      if (!decls->is_array()) {
        return bad(decls_path, "Invalid value, expected a list of FunctionDeclaration");
      }
      const json::array& list = decls->get_array();
      for (std::size_t k = 0; k < list.size(); ++k) {
        if (auto r = declaration(list[k], index(decls_path, k), out); !r) {
          return r;
        }
      }
    }
    return {};
  }

  Result<void> declaration(const json::value& v, const std::string& path, ir::Request& out) {
    if (!v.is_object()) {
      return bad(path, "Invalid value, expected a FunctionDeclaration object");
    }
    const json::object& d = v.get_object();
    ir::Tool tool;
    auto name = string_member(d, "name");
    if (!name || name->empty()) {
      return bad(join(path, "name"), "a function declaration needs a name");
    }
    tool.name.assign(*name);
    tool.description.assign(string_member(d, "description").value_or(""));
    const json::value* schema = member(d, "parameters");
    const json::value* json_schema = member(d, "parametersJsonSchema");
    if (schema != nullptr && json_schema != nullptr) {
      return bad(join(path, "parameters"),
                 "parameters and parametersJsonSchema are mutually exclusive");
    }
    if (schema != nullptr) {
      if (!schema->is_object()) {
        return bad(join(path, "parameters"), "Invalid value, expected a Schema object");
      }
      json::value copy(*schema);
      to_json_schema(copy);
      codec::append_compact_json(tool.parameters, copy);
    } else if (json_schema != nullptr) {
      if (!json_schema->is_object()) {
        return bad(join(path, "parameters_json_schema"), "Invalid value, expected an object");
      }
      codec::append_compact_json(tool.parameters, *json_schema);
    } else {
      tool.parameters = kEmptySchema;
    }
    out.tools.push_back(std::move(tool));
    return {};
  }

  Result<void> tool_config(const json::object& root, ir::Request& out) {
    bool bad_type = false;
    const json::object* config = wire::object_member(root, "toolConfig", bad_type);
    const json::object* calling =
        config != nullptr ? wire::object_member(*config, "functionCallingConfig", bad_type)
                          : nullptr;
    const std::string path = "tool_config.function_calling_config";
    if (bad_type) {
      return bad(path, "Invalid value, expected an object");
    }
    if (calling == nullptr) {
      return {};
    }
    const std::string_view mode = string_member(*calling, "mode").value_or("MODE_UNSPECIFIED");
    std::vector<std::string_view> allowed;
    if (const json::value* names = member(*calling, "allowedFunctionNames")) {
      if (!names->is_array()) {
        return bad(join(path, "allowed_function_names"), "Invalid value, expected a list");
      }
      for (const json::value& n : names->get_array()) {
        if (!n.is_string()) {
          return bad(join(path, "allowed_function_names"), "Invalid value, expected a string");
        }
        allowed.emplace_back(n.get_string().data(), n.get_string().size());
      }
    }
    ir::ToolChoice& choice = out.tool_choice;
    const bool restricts = mode == "ANY" || mode == "VALIDATED";
    if (!allowed.empty() && !restricts) {
      return bad(join(path, "allowed_function_names"),
                 "allowed_function_names may only be set with mode ANY or VALIDATED");
    }
    if (mode == "AUTO" || mode == "VALIDATED") {
      choice.mode = ir::ToolChoiceMode::kAuto;
    } else if (mode == "NONE") {
      choice.mode = ir::ToolChoiceMode::kNone;
    } else if (mode == "ANY") {
      choice.mode = ir::ToolChoiceMode::kRequired;
    } else if (mode != "MODE_UNSPECIFIED") {
      return bad(join(path, "mode"), "Invalid value, expected AUTO, ANY, NONE or VALIDATED");
    }
    if (mode == "ANY" && allowed.size() == 1) {
      choice.mode = ir::ToolChoiceMode::kNamed;
      choice.name.assign(allowed.front());
    } else if (!allowed.empty()) {
      // The model may call only these: the other declarations are left out.
      std::erase_if(out.tools, [&](const ir::Tool& t) {
        for (std::string_view n : allowed) {
          if (n == t.name) {
            return false;
          }
        }
        return true;
      });
    }
    return {};
  }

  Result<void> generation_config(const json::object& root, ir::Request& out) {
    const json::value* v = member(root, "generationConfig");
    if (v == nullptr) {
      return {};
    }
    constexpr std::string_view base = "generation_config";
    if (!v->is_object()) {
      return bad(std::string(base), "Invalid value, expected a GenerationConfig object");
    }
    const json::object& g = v->get_object();
    if (const json::value* n = member(g, "maxOutputTokens")) {
      auto c = count(*n, join(base, "max_output_tokens"));
      if (!c) {
        return std::move(c).error();
      }
      out.max_tokens = *c;
    }
    for (auto [key, field, target] : {std::tuple{"temperature", "temperature", &out.temperature},
                                      std::tuple{"topP", "top_p", &out.top_p}}) {
      if (const json::value* n = member(g, key)) {
        if (!n->is_number()) {
          return bad(join(base, field), "Invalid value, expected a number");
        }
        *target = n->to_number<double>();
      }
    }
    if (const json::value* n = member(g, "topK")) {
      auto c = count(*n, join(base, "top_k"));
      if (!c) {
        return std::move(c).error();
      }
      out.top_k = *c;
    }
    if (const json::value* s = member(g, "stopSequences")) {
      if (!s->is_array()) {
        return bad(join(base, "stop_sequences"), "Invalid value, expected a list of strings");
      }
      for (const json::value& e : s->get_array()) {
        if (!e.is_string()) {
          return bad(join(base, "stop_sequences"), "Invalid value, expected a string");
        }
        out.stop.emplace_back(e.get_string().data(), e.get_string().size());
      }
    }
    if (const json::value* n = member(g, "candidateCount")) {
      auto c = count(*n, join(base, "candidate_count"));
      if (!c) {
        return std::move(c).error();
      }
      if (*c > 1) {
        return untranslatable(join(base, "candidate_count"), "candidateCount above 1");
      }
    }
    if (auto r = response_format(g, base, out); !r) {
      return r;
    }
    if (auto r = thinking(g, base, out); !r) {
      return r;
    }
    static constexpr std::array<std::string_view, 10> kKnown = {"maxOutputTokens",
                                                                "temperature",
                                                                "topP",
                                                                "topK",
                                                                "stopSequences",
                                                                "candidateCount",
                                                                "responseMimeType",
                                                                "responseSchema",
                                                                "responseJsonSchema",
                                                                "thinkingConfig"};
    std::string scratch;
    for (const json::key_value_pair& kv : g) {
      const std::string_view key =
          camel_view(std::string_view(kv.key().data(), kv.key().size()), scratch);
      if (!one_of(key, kKnown) && !kv.value().is_null()) {
        if (auto r = ignore(base, key); !r) {
          return r;
        }
      }
    }
    return {};
  }

  // responseMimeType with responseJsonSchema (JSON Schema, as it is) or responseSchema (Gemini's
  // Schema, converted) -> response_format.
  static Result<void> response_format(const json::object& g, std::string_view base,
                                      ir::Request& out) {
    // Paths are spelt only for an error: this runs for every translated Gemini request.
    auto mime_path = [base] { return join(base, "response_mime_type"); };
    std::string_view mime = "text/plain";
    if (const json::value* m = member(g, "responseMimeType"); m != nullptr && !m->is_null()) {
      if (!m->is_string()) {
        return bad(mime_path(), "Invalid value, expected a string");
      }
      mime = std::string_view(m->get_string().data(), m->get_string().size());
    }
    const json::value* schema = member(g, "responseSchema");
    const json::value* json_schema = member(g, "responseJsonSchema");
    schema = schema != nullptr && schema->is_null() ? nullptr : schema;
    json_schema = json_schema != nullptr && json_schema->is_null() ? nullptr : json_schema;
    if (schema != nullptr && json_schema != nullptr) {
      return bad(join(base, "response_schema"),
                 "response_schema and response_json_schema are mutually exclusive");
    }
    auto schema_path = [base, schema] {
      return join(base, schema != nullptr ? "response_schema" : "response_json_schema");
    };
    if (mime == "text/plain" || mime.empty()) {
      if (schema != nullptr || json_schema != nullptr) {
        return bad(schema_path(),
                   "a response schema requires response_mime_type \"application/json\"");
      }
      out.response_format.kind = ir::ResponseFormat::Kind::kText;
      return {};
    }
    if (mime != "application/json") {
      // text/x.enum and other types constrain the answer in ways no other provider can.
      return untranslatable(mime_path(), "responseMimeType " + std::string(mime));
    }
    ir::ResponseFormat& f = out.response_format;
    if (schema == nullptr && json_schema == nullptr) {
      f.kind = ir::ResponseFormat::Kind::kJsonObject;
      return {};
    }
    const json::value& given = schema != nullptr ? *schema : *json_schema;
    if (!given.is_object()) {
      return bad(schema_path(), schema != nullptr ? "Invalid value, expected a Schema object"
                                                  : "Invalid value, expected an object");
    }
    f.kind = ir::ResponseFormat::Kind::kJsonSchema;
    f.schema.clear();
    if (schema != nullptr) {
      json::value copy(given);
      to_json_schema(copy);
      codec::append_compact_json(f.schema, copy);
    } else {
      codec::append_compact_json(f.schema, given);
    }
    return {};
  }

  Result<void> thinking(const json::object& g, std::string_view base, ir::Request& out) {
    bool bad_type = false;
    const json::object* t = wire::object_member(g, "thinkingConfig", bad_type);
    auto path = [base] { return join(base, "thinking_config"); };
    if (bad_type) {
      return bad(path(), "Invalid value, expected a ThinkingConfig object");
    }
    if (t == nullptr) {
      return {};
    }
    ir::Reasoning& r = out.reasoning;
    if (const json::value* inc = member(*t, "includeThoughts")) {
      if (!inc->is_bool()) {
        return bad(join(path(), "include_thoughts"), "Invalid value, expected a boolean");
      }
      r.enabled = inc->get_bool();
    }
    if (auto level = string_member(*t, "thinkingLevel")) {
      static constexpr std::array<std::string_view, 4> kLevels = {"MINIMAL", "LOW", "MEDIUM",
                                                                  "HIGH"};
      if (!one_of(*level, kLevels)) {
        return bad(join(path(), "thinking_level"),
                   "Invalid value, expected MINIMAL, LOW, MEDIUM or HIGH");
      }
      r.enabled = true;
      r.effort.assign(*level);
      for (char& c : r.effort) {
        c = static_cast<char>(c - 'A' + 'a');
      }
    }
    if (const json::value* b = member(*t, "thinkingBudget")) {
      auto n = integer(*b);
      if (!n || *n < -1 || *n > std::numeric_limits<std::uint32_t>::max()) {
        return bad(join(path(), "thinking_budget"), "Invalid value, expected -1, 0 or a budget");
      }
      if (*n == 0) {
        r.enabled = false;
        r.budget_tokens = 0;
      } else {
        r.enabled = true;
        if (*n > 0) {
          r.budget_tokens = static_cast<std::uint32_t>(*n);
        }
      }
    }
    return {};
  }

  DecodeStats* stats_;
  const DecodeOptions& options_;
  std::size_t content_ = 0;
  std::vector<Call> calls_;
};

}  // namespace

Result<ir::Request> decode_request(std::string_view body, DecodeStats* stats,
                                   const DecodeOptions& options) {
  codec::SmallDocumentArena arena;
  boost::system::error_code ec;
  json::value doc = codec::parse_json(body, ec, &arena.resource, kMaxJsonDepth);
  if (ec) {
    return Error(ErrorKind::kBadRequest, "Invalid JSON payload received. " + ec.message());
  }
  if (!doc.is_object()) {
    return Error(ErrorKind::kBadRequest,
                 "Invalid JSON payload received. Expected a GenerateContentRequest object.");
  }
  ir::Request request;
  RequestDecoder decoder(stats, options);
  if (auto r = decoder.decode(doc.get_object(), request); !r) {
    return std::move(r).error();
  }
  return request;
}

}  // namespace sluice::protocol::gemini
