#include "protocol/anthropic/request_decoder.h"

#include <array>
#include <cmath>
#include <initializer_list>
#include <limits>
#include <string>

#include <boost/json/monotonic_resource.hpp>

#include "codec/json_read.h"
#include "protocol/anthropic/conventions.h"

// Decodes into a DOM (allocated from one monotonic arena per request) and walks it. Field paths
// and messages follow the shape the Anthropic API uses for validation errors, e.g.
// "messages.2.content.0: unexpected `tool_use_id` ..." (tests/fixtures/anthropic/
// error-400-invalid-request.json) and pydantic's "Field required", "Input should be a valid
// integer", "Extra inputs are not permitted".

#define SLUICE_ANTHROPIC_TRY(expr)  \
  do {                              \
    if (auto _r = (expr); !_r) {    \
      return std::move(_r).error(); \
    }                               \
  } while (false)

namespace sluice::protocol::anthropic {
namespace json = boost::json;

namespace {

constexpr std::string_view kFieldRequired = "Field required";
constexpr std::string_view kNotString = "Input should be a valid string";
constexpr std::string_view kNotInteger = "Input should be a valid integer";
constexpr std::string_view kNotNumber = "Input should be a valid number";
constexpr std::string_view kNotBool = "Input should be a valid boolean";
constexpr std::string_view kNotList = "Input should be a valid list";
constexpr std::string_view kNotObject = "Input should be a valid dictionary";

std::string join(std::string_view base, std::string_view field) {
  std::string out;
  out.reserve(base.size() + field.size() + 1);
  out.append(base);
  if (!base.empty()) {
    out.push_back('.');
  }
  out.append(field);
  return out;
}

std::string join(std::string_view base, std::size_t index) {
  return join(base, std::to_string(index));
}

Error bad(std::string path, std::string_view problem) {
  std::string message = path;
  message.append(": ");
  message.append(problem);
  return Error(ErrorKind::kBadRequest, std::move(message)).with_param(std::move(path));
}

Error bad_tag(std::string path, std::string_view tag,
              std::initializer_list<std::string_view> tags) {
  std::string problem = "Input tag '";
  problem.append(tag);
  problem.append("' found using 'type' does not match any of the expected tags: ");
  bool first = true;
  for (std::string_view t : tags) {
    if (!first) {
      problem.append(", ");
    }
    first = false;
    problem.push_back('\'');
    problem.append(t);
    problem.push_back('\'');
  }
  return bad(std::move(path), problem);
}

Error unsupported(std::string path, std::string_view what) {
  std::string problem = "'";
  problem.append(what);
  problem.append("' is not supported by this gateway");
  return bad(std::move(path), problem);
}

std::string_view view(const json::string& s) { return {s.data(), s.size()}; }

// Optional fields given as null count as absent (clients built on OpenAI habits send them).
const json::value* field(const json::object& o, std::string_view key) {
  const json::value* v = o.if_contains(key);
  return v == nullptr || v->is_null() ? nullptr : v;
}

Result<std::string_view> required_string(const json::object& o, std::string_view key,
                                         std::string_view base) {
  const json::value* v = o.if_contains(key);
  if (v == nullptr) {
    return bad(join(base, key), kFieldRequired);
  }
  if (!v->is_string()) {
    return bad(join(base, key), kNotString);
  }
  return view(v->get_string());
}

// Reads an optional string field; absent or null leaves `out` unchanged.
Result<void> optional_string(const json::object& o, std::string_view key, std::string_view base,
                             std::string& out) {
  const json::value* v = field(o, key);
  if (v == nullptr) {
    return {};
  }
  if (!v->is_string()) {
    return bad(join(base, key), kNotString);
  }
  out.assign(view(v->get_string()));
  return {};
}

Result<void> optional_bool(const json::object& o, std::string_view key, std::string_view base,
                           bool& out) {
  const json::value* v = field(o, key);
  if (v == nullptr) {
    return {};
  }
  if (!v->is_bool()) {
    return bad(join(base, key), kNotBool);
  }
  out = v->get_bool();
  return {};
}

// JSON integers, and floats without a fractional part (pydantic's lax mode accepts 1024.0).
// Values beyond int64 saturate, so range checks still reject them.
bool read_integer(const json::value& v, std::int64_t& out) {
  if (v.is_int64()) {
    out = v.get_int64();
    return true;
  }
  if (v.is_uint64()) {
    out = std::numeric_limits<std::int64_t>::max();
    return true;
  }
  if (v.is_double()) {
    const double d = v.get_double();
    if (!std::isfinite(d) || std::trunc(d) != d) {
      return false;
    }
    if (d >= 9.2e18) {
      out = std::numeric_limits<std::int64_t>::max();
    } else if (d <= -9.2e18) {
      out = std::numeric_limits<std::int64_t>::min();
    } else {
      out = static_cast<std::int64_t>(d);
    }
    return true;
  }
  return false;
}

Result<std::uint32_t> bounded_integer(const json::value& v, std::string path, std::int64_t min) {
  std::int64_t n = 0;
  if (!read_integer(v, n)) {
    return bad(std::move(path), kNotInteger);
  }
  if (n < min) {
    return bad(std::move(path), "Input should be greater than or equal to " + std::to_string(min));
  }
  constexpr std::int64_t kMax = std::numeric_limits<std::uint32_t>::max();
  if (n > kMax) {
    return bad(std::move(path), "Input should be less than or equal to " + std::to_string(kMax));
  }
  return static_cast<std::uint32_t>(n);
}

Result<double> unit_number(const json::value& v, std::string path) {
  if (!v.is_number()) {
    return bad(std::move(path), kNotNumber);
  }
  const double d = v.to_number<double>();
  if (d < 0.0) {
    return bad(std::move(path), "Input should be greater than or equal to 0");
  }
  if (d > 1.0) {
    return bad(std::move(path), "Input should be less than or equal to 1");
  }
  return d;
}

Result<void> cache_control(const json::object& block, std::string_view base,
                           ir::ContentPart& part) {
  const json::value* v = field(block, "cache_control");
  if (v == nullptr) {
    return {};
  }
  const std::string path = join(base, "cache_control");
  if (!v->is_object()) {
    return bad(path, kNotObject);
  }
  const json::object& cc = v->get_object();
  auto type = required_string(cc, "type", path);
  if (!type) {
    return std::move(type).error();
  }
  if (*type != "ephemeral") {
    return bad_tag(join(path, "type"), *type, {"ephemeral"});
  }
  if (const json::value* ttl = field(cc, "ttl")) {
    if (!ttl->is_string() || (ttl->get_string() != "5m" && ttl->get_string() != "1h")) {
      return bad(join(path, "ttl"), "Input should be '5m' or '1h'");
    }
    part.cache_ttl.assign(view(ttl->get_string()));
  }
  part.cache_breakpoint = true;
  return {};
}

// Block types the Messages API defines that the IR cannot carry: rejected explicitly.
constexpr std::array<std::string_view, 12> kUnsupportedBlocks = {
    "document",
    "search_result",
    "server_tool_use",
    "web_search_tool_result",
    "web_fetch_tool_result",
    "code_execution_tool_result",
    "bash_code_execution_tool_result",
    "text_editor_code_execution_tool_result",
    "mcp_tool_use",
    "mcp_tool_result",
    "container_upload",
    "tool_reference",
};

bool is_unsupported_block(std::string_view type) {
  for (std::string_view t : kUnsupportedBlocks) {
    if (t == type) {
      return true;
    }
  }
  return false;
}

enum class Where { kMessage, kToolResult, kSystem };

class RequestDecoder {
 public:
  RequestDecoder(const DecodeOptions& options, DecodeStats* stats)
      : options_(options), stats_(stats) {}

  Result<void> decode(const json::object& root, ir::Request& out) {
    auto model = required_string(root, "model", "");
    if (!model) {
      return std::move(model).error();
    }
    if (model->empty()) {
      return bad("model", "String should have at least 1 character");
    }
    out.model.assign(*model);

    const json::value* max_tokens = root.if_contains("max_tokens");
    if (max_tokens == nullptr && !options_.count_tokens) {
      return bad("max_tokens", kFieldRequired);
    }
    if (max_tokens != nullptr) {
      auto mt = bounded_integer(*max_tokens, "max_tokens", 1);
      if (!mt) {
        return std::move(mt).error();
      }
      out.max_tokens = *mt;
    }

    SLUICE_ANTHROPIC_TRY(messages(root, out));
    SLUICE_ANTHROPIC_TRY(system(root, out));
    SLUICE_ANTHROPIC_TRY(tools(root, out));
    SLUICE_ANTHROPIC_TRY(tool_choice(root, out));
    SLUICE_ANTHROPIC_TRY(sampling(root, out));
    SLUICE_ANTHROPIC_TRY(optional_bool(root, "stream", "", out.stream));
    SLUICE_ANTHROPIC_TRY(metadata(root, out));
    SLUICE_ANTHROPIC_TRY(thinking(root, out));
    SLUICE_ANTHROPIC_TRY(output_config(root, out));

    for (const json::key_value_pair& kv : root) {
      if (!known_top_level(view(kv.key()))) {
        if (options_.strict) {
          return bad(std::string(view(kv.key())), "Extra inputs are not permitted");
        }
        if (stats_ != nullptr) {
          ++stats_->ignored_fields;
        }
      }
    }
    return {};
  }

 private:
  static bool known_top_level(std::string_view key) {
    static constexpr std::array<std::string_view, 16> kKnown = {
        "model",       "max_tokens",    "messages",      "system",          "tools",  "tool_choice",
        "temperature", "top_p",         "top_k",         "stop_sequences",  "stream", "metadata",
        "thinking",    "output_config", "output_format", "provider_options"};
    for (std::string_view k : kKnown) {
      if (k == key) {
        return true;
      }
    }
    return false;
  }

  Result<void> messages(const json::object& root, ir::Request& out) {
    const json::value* v = root.if_contains("messages");
    if (v == nullptr) {
      return bad("messages", kFieldRequired);
    }
    if (!v->is_array()) {
      return bad("messages", kNotList);
    }
    const json::array& arr = v->get_array();
    if (arr.empty()) {
      return bad("messages", "at least one message is required");
    }
    out.messages.resize(arr.size());
    for (std::size_t i = 0; i < arr.size(); ++i) {
      SLUICE_ANTHROPIC_TRY(message(arr[i], join("messages", i), out.messages[i]));
    }
    // "all messages must have non-empty content except for the optional final assistant
    // message" (the API's wording): an empty final assistant turn is a prefill.
    for (std::size_t i = 0; i < out.messages.size(); ++i) {
      const ir::Message& m = out.messages[i];
      const bool final_assistant = i + 1 == out.messages.size() && m.role == ir::Role::kAssistant;
      if (m.content.empty() && !final_assistant) {
        return bad(join("messages", i),
                   "all messages must have non-empty content except for the optional final "
                   "assistant message");
      }
    }
    return {};
  }

  Result<void> message(const json::value& v, const std::string& path, ir::Message& out) {
    if (!v.is_object()) {
      return bad(path, kNotObject);
    }
    const json::object& o = v.get_object();
    auto role = required_string(o, "role", path);
    if (!role) {
      return std::move(role).error();
    }
    Where where = Where::kMessage;
    if (*role == "user") {
      out.role = ir::Role::kUser;
    } else if (*role == "assistant") {
      out.role = ir::Role::kAssistant;
    } else if (*role == "system") {
      // Claude Code sends system entries inside `messages` (its mid-conversation instructions
      // beta). They hold text, like the top-level system prompt.
      out.role = ir::Role::kSystem;
      where = Where::kSystem;
    } else {
      return bad(join(path, "role"), "Input should be 'user', 'assistant' or 'system'");
    }
    const json::value* content = o.if_contains("content");
    const std::string content_path = join(path, "content");
    if (content == nullptr) {
      return bad(content_path, kFieldRequired);
    }
    if (content->is_string()) {
      if (!content->get_string().empty()) {
        out.content.push_back(ir::ContentPart::make_text(std::string(view(content->get_string()))));
      }
      return {};
    }
    if (!content->is_array()) {
      return bad(content_path, kNotList);
    }
    const json::array& blocks = content->get_array();
    out.content.resize(blocks.size());
    for (std::size_t j = 0; j < blocks.size(); ++j) {
      SLUICE_ANTHROPIC_TRY(block(blocks[j], join(content_path, j), where, out.content[j]));
    }
    return {};
  }

  Result<void> block(const json::value& v, const std::string& path, Where where,
                     ir::ContentPart& out) {
    if (!v.is_object()) {
      return bad(path, kNotObject);
    }
    const json::object& o = v.get_object();
    auto type = required_string(o, "type", path);
    if (!type) {
      return std::move(type).error();
    }
    const std::string_view t = *type;
    const bool allowed =
        t == "text" || (where != Where::kSystem && t == "image") ||
        (where == Where::kMessage &&
         (t == "tool_use" || t == "tool_result" || t == "thinking" || t == "redacted_thinking"));
    if (!allowed) {
      if (is_unsupported_block(t)) {
        return unsupported(join(path, "type"), t);
      }
      switch (where) {
        case Where::kSystem:
          return bad_tag(join(path, "type"), t, {"text"});
        case Where::kToolResult:
          return bad_tag(join(path, "type"), t, {"text", "image"});
        case Where::kMessage:
          return bad_tag(
              join(path, "type"), t,
              {"text", "image", "tool_use", "tool_result", "thinking", "redacted_thinking"});
      }
    }

    if (t == "text") {
      out.kind = ir::PartKind::kText;
      auto text = required_string(o, "text", path);
      if (!text) {
        return std::move(text).error();
      }
      out.text.assign(*text);
    } else if (t == "image") {
      SLUICE_ANTHROPIC_TRY(image(o, path, out));
    } else if (t == "tool_use") {
      SLUICE_ANTHROPIC_TRY(tool_use(o, path, out));
    } else if (t == "tool_result") {
      SLUICE_ANTHROPIC_TRY(tool_result(o, path, out));
    } else if (t == "thinking") {
      out.kind = ir::PartKind::kReasoning;
      auto thinking = required_string(o, "thinking", path);
      if (!thinking) {
        return std::move(thinking).error();
      }
      auto signature = required_string(o, "signature", path);
      if (!signature) {
        return std::move(signature).error();
      }
      out.text.assign(*thinking);
      out.signature.assign(*signature);
      return {};  // thinking blocks take no cache_control
    } else {      // redacted_thinking
      out.kind = ir::PartKind::kRedactedReasoning;
      auto data = required_string(o, "data", path);
      if (!data) {
        return std::move(data).error();
      }
      out.signature.assign(*data);
      return {};
    }
    return cache_control(o, path, out);
  }

  Result<void> image(const json::object& o, const std::string& path, ir::ContentPart& out) {
    out.kind = ir::PartKind::kImage;
    const std::string source_path = join(path, "source");
    const json::value* source = o.if_contains("source");
    if (source == nullptr) {
      return bad(source_path, kFieldRequired);
    }
    if (!source->is_object()) {
      return bad(source_path, kNotObject);
    }
    const json::object& s = source->get_object();
    auto type = required_string(s, "type", source_path);
    if (!type) {
      return std::move(type).error();
    }
    if (*type == "base64") {
      auto media_type = required_string(s, "media_type", source_path);
      if (!media_type) {
        return std::move(media_type).error();
      }
      const std::string_view mt = *media_type;
      if (mt != "image/jpeg" && mt != "image/png" && mt != "image/gif" && mt != "image/webp") {
        return bad(join(source_path, "media_type"),
                   "Input should be 'image/jpeg', 'image/png', 'image/gif' or 'image/webp'");
      }
      auto data = required_string(s, "data", source_path);
      if (!data) {
        return std::move(data).error();
      }
      out.media_type.assign(mt);
      out.source.assign(*data);
      out.image_is_url = false;
      return {};
    }
    if (*type == "url") {
      auto url = required_string(s, "url", source_path);
      if (!url) {
        return std::move(url).error();
      }
      out.source.assign(*url);
      out.image_is_url = true;
      return {};
    }
    if (*type == "file") {
      return unsupported(join(source_path, "type"), "file");
    }
    return bad_tag(join(source_path, "type"), *type, {"base64", "url"});
  }

  Result<void> tool_use(const json::object& o, const std::string& path, ir::ContentPart& out) {
    out.kind = ir::PartKind::kToolCall;
    auto id = required_string(o, "id", path);
    if (!id) {
      return std::move(id).error();
    }
    auto name = required_string(o, "name", path);
    if (!name) {
      return std::move(name).error();
    }
    const json::value* input = o.if_contains("input");
    if (input == nullptr) {
      return bad(join(path, "input"), kFieldRequired);
    }
    if (!input->is_object()) {
      return bad(join(path, "input"), kNotObject);
    }
    out.id.assign(*id);
    out.name.assign(*name);
    append_compact_json(out.arguments, *input);
    return {};
  }

  Result<void> tool_result(const json::object& o, const std::string& path, ir::ContentPart& out) {
    out.kind = ir::PartKind::kToolResult;
    auto id = required_string(o, "tool_use_id", path);
    if (!id) {
      return std::move(id).error();
    }
    out.id.assign(*id);
    SLUICE_ANTHROPIC_TRY(optional_bool(o, "is_error", path, out.is_error));
    const json::value* content = field(o, "content");
    if (content == nullptr) {
      return {};
    }
    if (content->is_string()) {
      if (!content->get_string().empty()) {
        out.parts.push_back(ir::ContentPart::make_text(std::string(view(content->get_string()))));
      }
      return {};
    }
    const std::string content_path = join(path, "content");
    if (!content->is_array()) {
      return bad(content_path, kNotList);
    }
    const json::array& blocks = content->get_array();
    out.parts.resize(blocks.size());
    for (std::size_t k = 0; k < blocks.size(); ++k) {
      SLUICE_ANTHROPIC_TRY(
          block(blocks[k], join(content_path, k), Where::kToolResult, out.parts[k]));
    }
    return {};
  }

  Result<void> system(const json::object& root, ir::Request& out) {
    const json::value* v = field(root, "system");
    if (v == nullptr) {
      return {};
    }
    if (v->is_string()) {
      if (!v->get_string().empty()) {
        out.system.push_back(ir::ContentPart::make_text(std::string(view(v->get_string()))));
      }
      return {};
    }
    if (!v->is_array()) {
      return bad("system", kNotList);
    }
    const json::array& blocks = v->get_array();
    out.system.resize(blocks.size());
    for (std::size_t i = 0; i < blocks.size(); ++i) {
      SLUICE_ANTHROPIC_TRY(block(blocks[i], join("system", i), Where::kSystem, out.system[i]));
    }
    return {};
  }

  Result<void> tools(const json::object& root, ir::Request& out) {
    const json::value* v = field(root, "tools");
    if (v == nullptr) {
      return {};
    }
    if (!v->is_array()) {
      return bad("tools", kNotList);
    }
    const json::array& arr = v->get_array();
    out.tools.resize(arr.size());
    for (std::size_t i = 0; i < arr.size(); ++i) {
      const std::string path = join("tools", i);
      if (!arr[i].is_object()) {
        return bad(path, kNotObject);
      }
      const json::object& o = arr[i].get_object();
      ir::Tool& tool = out.tools[i];
      if (const json::value* type = field(o, "type")) {
        if (!type->is_string()) {
          return bad(join(path, "type"), kNotString);
        }
        if (type->get_string() != "custom") {
          // Server tools (web_search_*, bash_*, text_editor_*, ...) run inside Anthropic's API
          // and have no IR form.
          return unsupported(join(path, "type"), view(type->get_string()));
        }
      }
      auto name = required_string(o, "name", path);
      if (!name) {
        return std::move(name).error();
      }
      if (name->empty()) {
        return bad(join(path, "name"), "String should have at least 1 character");
      }
      tool.name.assign(*name);
      SLUICE_ANTHROPIC_TRY(optional_string(o, "description", path, tool.description));
      const json::value* schema = o.if_contains("input_schema");
      if (schema == nullptr) {
        return bad(join(path, "input_schema"), kFieldRequired);
      }
      if (!schema->is_object()) {
        return bad(join(path, "input_schema"), kNotObject);
      }
      append_compact_json(tool.parameters, *schema);
      ir::ContentPart cache;
      SLUICE_ANTHROPIC_TRY(cache_control(o, path, cache));
      tool.cache_breakpoint = cache.cache_breakpoint;
    }
    return {};
  }

  Result<void> tool_choice(const json::object& root, ir::Request& out) {
    const json::value* v = field(root, "tool_choice");
    if (v == nullptr) {
      return {};
    }
    if (!v->is_object()) {
      return bad("tool_choice", kNotObject);
    }
    const json::object& o = v->get_object();
    auto type = required_string(o, "type", "tool_choice");
    if (!type) {
      return std::move(type).error();
    }
    ir::ToolChoice& choice = out.tool_choice;
    const std::string base = join("tool_choice", *type);
    if (*type == "auto") {
      choice.mode = ir::ToolChoiceMode::kAuto;
    } else if (*type == "any") {
      choice.mode = ir::ToolChoiceMode::kRequired;
    } else if (*type == "none") {
      choice.mode = ir::ToolChoiceMode::kNone;
    } else if (*type == "tool") {
      choice.mode = ir::ToolChoiceMode::kNamed;
      auto name = required_string(o, "name", base);
      if (!name) {
        return std::move(name).error();
      }
      choice.name.assign(*name);
    } else {
      return bad_tag("tool_choice.type", *type, {"auto", "any", "tool", "none"});
    }
    return optional_bool(o, "disable_parallel_tool_use", base, choice.disable_parallel_tool_use);
  }

  Result<void> sampling(const json::object& root, ir::Request& out) {
    if (const json::value* v = field(root, "temperature")) {
      auto t = unit_number(*v, "temperature");
      if (!t) {
        return std::move(t).error();
      }
      out.temperature = *t;
    }
    if (const json::value* v = field(root, "top_p")) {
      auto p = unit_number(*v, "top_p");
      if (!p) {
        return std::move(p).error();
      }
      out.top_p = *p;
    }
    if (const json::value* v = field(root, "top_k")) {
      auto k = bounded_integer(*v, "top_k", 0);
      if (!k) {
        return std::move(k).error();
      }
      out.top_k = *k;
    }
    if (const json::value* v = field(root, "stop_sequences")) {
      if (!v->is_array()) {
        return bad("stop_sequences", kNotList);
      }
      const json::array& arr = v->get_array();
      out.stop.reserve(arr.size());
      for (std::size_t i = 0; i < arr.size(); ++i) {
        if (!arr[i].is_string()) {
          return bad(join("stop_sequences", i), kNotString);
        }
        out.stop.emplace_back(view(arr[i].get_string()));
      }
    }
    return {};
  }

  Result<void> metadata(const json::object& root, ir::Request& out) {
    const json::value* v = field(root, "metadata");
    if (v == nullptr) {
      return {};
    }
    if (!v->is_object()) {
      return bad("metadata", kNotObject);
    }
    return optional_string(v->get_object(), "user_id", "metadata", out.user);
  }

  Result<void> thinking(const json::object& root, ir::Request& out) {
    const json::value* v = field(root, "thinking");
    if (v == nullptr) {
      return {};
    }
    if (!v->is_object()) {
      return bad("thinking", kNotObject);
    }
    const json::object& o = v->get_object();
    auto type = required_string(o, "type", "thinking");
    if (!type) {
      return std::move(type).error();
    }
    if (*type == "disabled") {
      out.reasoning.enabled = false;
      return {};
    }
    if (*type == "adaptive") {
      out.reasoning.enabled = true;
      return {};
    }
    if (*type != "enabled") {
      return bad_tag("thinking.type", *type, {"enabled", "disabled", "adaptive"});
    }
    const json::value* budget = o.if_contains("budget_tokens");
    if (budget == nullptr) {
      return bad("thinking.enabled.budget_tokens", kFieldRequired);
    }
    // Documented floor: "budget_tokens ... minimum 1024".
    auto b = bounded_integer(*budget, "thinking.enabled.budget_tokens", 1024);
    if (!b) {
      return std::move(b).error();
    }
    out.reasoning.enabled = true;
    out.reasoning.budget_tokens = *b;
    return {};
  }

  // output_config.effort (what Claude Code sends to pick a reasoning level) -> the IR's
  // reasoning effort, which OpenAI-compatible targets send as reasoning_effort;
  // output_config.format (and the structured-outputs beta's top-level output_format, same
  // shape) -> response_format. Other members have no place in the IR: counted as ignored
  // fields, or rejected when strict.
  Result<void> output_config(const json::object& root, ir::Request& out) {
    const json::value* legacy = field(root, "output_format");
    const json::value* v = field(root, "output_config");
    if (v != nullptr && !v->is_object()) {
      return bad("output_config", kNotObject);
    }
    const json::value* format = v != nullptr ? field(v->get_object(), "format") : nullptr;
    if (legacy != nullptr && format != nullptr) {
      return bad("output_format",
                 "output_format is deprecated and cannot be combined with output_config.format");
    }
    if (legacy != nullptr) {
      SLUICE_ANTHROPIC_TRY(output_format(*legacy, "output_format", out));
    }
    if (v == nullptr) {
      return {};
    }
    for (const json::key_value_pair& kv : v->get_object()) {
      const std::string_view key(kv.key().data(), kv.key().size());  // not view(): a temporary
      if (key == "effort") {
        if (!kv.value().is_string()) {
          return bad("output_config.effort", "Input should be a valid string");
        }
        out.reasoning.effort = std::string(view(kv.value().get_string()));
      } else if (key == "format") {
        if (!kv.value().is_null()) {
          SLUICE_ANTHROPIC_TRY(output_format(kv.value(), "output_config.format", out));
        }
      } else if (options_.strict) {
        return bad("output_config." + std::string(key), "Extra inputs are not permitted");
      } else if (stats_ != nullptr) {
        ++stats_->ignored_fields;
      }
    }
    return {};
  }

  // {type: "json_schema", schema: {...}} (JSONOutputFormat, the only format the API has).
  static Result<void> output_format(const json::value& v, const std::string& path,
                                    ir::Request& out) {
    if (!v.is_object()) {
      return bad(path, kNotObject);
    }
    const json::object& o = v.get_object();
    auto type = required_string(o, "type", path);
    if (!type) {
      return std::move(type).error();
    }
    if (*type != "json_schema") {
      return bad_tag(join(path, "type"), *type, {"json_schema"});
    }
    const json::value* schema = o.if_contains("schema");
    if (schema == nullptr) {
      return bad(join(path, "schema"), kFieldRequired);
    }
    if (!schema->is_object()) {
      return bad(join(path, "schema"), kNotObject);
    }
    for (const json::key_value_pair& kv : o) {
      const std::string_view key(kv.key().data(), kv.key().size());
      if (key != "type" && key != "schema") {
        return bad(join(path, key), "Extra inputs are not permitted");
      }
    }
    out.response_format.kind = ir::ResponseFormat::Kind::kJsonSchema;
    out.response_format.schema.clear();
    append_compact_json(out.response_format.schema, *schema);
    return {};
  }

  const DecodeOptions& options_;
  DecodeStats* stats_;
};

}  // namespace

Result<ir::Request> decode_request(std::string_view body, const DecodeOptions& options,
                                   DecodeStats* stats) {
  unsigned char arena[4096];
  json::monotonic_resource mr(arena, sizeof arena);
  boost::system::error_code ec;
  json::value doc = codec::parse_json(body, ec, &mr, kMaxJsonDepth);
  if (ec) {
    if (ec == json::error::too_deep) {
      return Error(ErrorKind::kBadRequest, "request body nests deeper than 64 levels");
    }
    return Error(ErrorKind::kBadRequest, "request body is not valid JSON: " + ec.message());
  }
  if (!doc.is_object()) {
    return Error(ErrorKind::kBadRequest, "request body must be a JSON object");
  }
  ir::Request request;
  RequestDecoder decoder(options, stats);
  if (auto r = decoder.decode(doc.get_object(), request); !r) {
    return std::move(r).error();
  }
  return request;
}

}  // namespace sluice::protocol::anthropic

#undef SLUICE_ANTHROPIC_TRY
