#include "protocol/bedrock_converse/request_encoder.h"

#include <algorithm>
#include <cstddef>
#include <limits>
#include <vector>

#include <boost/json/monotonic_resource.hpp>

#include "codec/json_read.h"
#include "codec/json_writer.h"
#include "protocol/bedrock_converse/conventions.h"

namespace sluice::protocol::bedrock_converse {
namespace json = boost::json;
using codec::JsonWriter;
using ir::PartKind;

namespace {

constexpr std::string_view kEmptySchema = R"({"type":"object"})";
constexpr std::string_view kSystemPrefix = "System: ";
constexpr std::string_view kJsonObjectInstruction =
    "Respond with a single JSON object and nothing else.";
constexpr std::uint32_t kMinThinkingBudget = 1024;  // Anthropic: "Must be >= 1024"
constexpr std::size_t kMaxStopSequences = 2500;     // InferenceConfigurationStopSequencesList

// Bodies are parsed with a nesting limit of kMaxJsonDepth. A tool call's input sits at level 7
// ({ messages [ { content [ { toolUse { input), a tool's schema at level 7 too
// ({ toolConfig { tools [ { toolSpec { inputSchema { json).
constexpr std::size_t kMaxNestedDepth = kMaxJsonDepth - 6;

Error bad(std::string message, std::string param) {
  return Error(ErrorKind::kBadRequest, std::move(message)).with_param(std::move(param));
}

Error out_of_unit_range(std::string_view field, double value) {
  std::string message(field);
  message.push_back(' ');
  JsonWriter(message).number(value);
  message.append(" is out of range for this model: its provider (Amazon Bedrock) accepts 0 to 1");
  return bad(std::move(message), std::string(field));
}

enum class JsonCheck { kObject, kNotObject, kInvalid, kTooDeep };

JsonCheck check_object(std::string_view text) {
  unsigned char arena[2048];
  json::monotonic_resource mr(arena, sizeof arena);
  boost::system::error_code ec;
  const json::value v = codec::parse_json(text, ec, &mr, kMaxNestedDepth);
  if (ec == json::error::too_deep) {
    return JsonCheck::kTooDeep;
  }
  if (ec) {
    return JsonCheck::kInvalid;
  }
  return v.is_object() ? JsonCheck::kObject : JsonCheck::kNotObject;
}

std::string describe_call(const ir::ContentPart& p) {
  return "tool call '" + p.id + "' (" + p.name + ")";
}

Result<void> write_cache_point(JsonWriter& w, const ir::ContentPart& p, const char* param) {
  if (!p.cache_breakpoint) {
    return {};
  }
  if (!p.cache_ttl.empty() && p.cache_ttl != "5m" && p.cache_ttl != "1h") {
    return bad(
        "cache ttl '" + p.cache_ttl + "' is not supported by this model's provider; use 5m or 1h",
        param);
  }
  w.raw(R"(,{"cachePoint":{"type":"default")");
  if (!p.cache_ttl.empty()) {
    w.raw(R"(,"ttl":)").string(p.cache_ttl);
  }
  w.raw("}}");
  return {};
}

// The format of an s3:// image: the media type's, else the object key's extension.
std::string_view s3_image_format(const ir::ContentPart& p) {
  if (std::string_view f = image_format(p.media_type); !f.empty()) {
    return f;
  }
  std::string_view uri = p.source;
  const std::size_t dot = uri.rfind('.');
  if (dot == std::string_view::npos) {
    return {};
  }
  std::string ext(uri.substr(dot + 1));
  std::transform(ext.begin(), ext.end(), ext.begin(), [](char c) {
    return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
  });
  if (ext == "jpg" || ext == "jpeg") {
    return "jpeg";
  }
  if (ext == "png" || ext == "gif" || ext == "webp") {
    return image_format("image/" + ext);
  }
  return {};
}

Result<void> write_image(JsonWriter& w, const ir::ContentPart& p) {
  if (p.image_is_url) {
    const std::string_view format = s3_image_format(p);
    if (!std::string_view(p.source).starts_with("s3://") || format.empty()) {
      return bad(
          "image URLs cannot be sent to this model's provider (Amazon Bedrock takes image data "
          "or s3:// locations of png, jpeg, gif or webp images); send the image as base64 data",
          "messages");
    }
    w.raw(R"({"image":{"format":)").string(format);
    w.raw(R"(,"source":{"s3Location":{"uri":)").string(p.source).raw("}}}}");
    return {};
  }
  const std::string_view format = image_format(p.media_type);
  if (format.empty()) {
    return bad("image media type '" + p.media_type +
                   "' is not supported by this model's provider; use image/jpeg, image/png, "
                   "image/gif or image/webp",
               "messages");
  }
  w.raw(R"({"image":{"format":)").string(format);
  w.raw(R"(,"source":{"bytes":)").string(p.source).raw("}}}");
  return {};
}

bool kept(const ir::ContentPart& p, EncodeStats& stats) {
  if (p.kind == PartKind::kText && p.text.empty()) {
    ++stats.dropped_empty;
    return false;
  }
  if (p.kind == PartKind::kReasoning && p.signature.empty()) {
    ++stats.dropped_reasoning;
    return false;
  }
  return true;
}

struct Item {
  const ir::ContentPart* part;
  bool system_prefix;
};

struct Turn {
  bool assistant;
  std::size_t begin;
  std::size_t end;
};

class Encoder {
 public:
  Encoder(const ir::Request& request, std::string_view model, const EncodeOptions& options,
          EncodeStats& stats, std::string& out)
      : request_(request),
        claude_(is_claude_model(model)),
        options_(options),
        stats_(stats),
        w_(out) {}

  Result<void> encode() {
    if (auto r = collect(); !r) {
      return r;
    }
    if (turns_.empty()) {
      return bad(
          "the request has no user or assistant message with content; this model's provider "
          "needs at least one",
          "messages");
    }
    if (request_.max_tokens && *request_.max_tokens == 0) {
      return bad("max_tokens must be at least 1", "max_tokens");
    }
    std::optional<std::uint64_t> max_tokens = request_.max_tokens;
    std::uint32_t budget = 0;
    if (auto r = thinking_budget(max_tokens, budget); !r) {
      return r;
    }

    w_.ch('{');
    if (auto r = write_system(); !r) {
      return r;
    }
    w_.raw(system_.empty() ? R"("messages":[)" : R"(,"messages":[)");
    for (std::size_t t = 0; t < turns_.size(); ++t) {
      if (t > 0) {
        w_.ch(',');
      }
      if (auto r = write_turn(turns_[t]); !r) {
        return r;
      }
    }
    w_.ch(']');
    if (auto r = write_inference_config(max_tokens); !r) {
      return r;
    }
    if (auto r = write_tool_config(); !r) {
      return r;
    }
    write_additional_fields(budget);
    if (claude_ && !request_.stop.empty()) {
      w_.raw(R"(,"additionalModelResponseFieldPaths":["/delta/stop_sequence"])");
    }
    write_output_config();
    w_.ch('}');
    return {};
  }

 private:
  Result<void> collect() {
    for (const ir::ContentPart& p : request_.system) {
      if (auto r = add_system_part(p, "system"); !r) {
        return r;
      }
    }
    bool leading = true;
    for (const ir::Message& m : request_.messages) {
      const bool is_system = m.role == ir::Role::kSystem;
      if (is_system && leading) {
        for (const ir::ContentPart& p : m.content) {
          if (auto r = add_system_part(p, "messages"); !r) {
            return r;
          }
        }
        continue;
      }
      leading = false;
      const bool assistant = m.role == ir::Role::kAssistant;
      for (const ir::ContentPart& p : m.content) {
        if (is_system && p.kind != PartKind::kText) {
          return bad("system messages can only hold text", "messages");
        }
        if (p.kind == PartKind::kToolCall || p.kind == PartKind::kToolResult) {
          has_tool_blocks_ = true;
        }
        if (!kept(p, stats_)) {
          continue;
        }
        if (turns_.empty() || turns_.back().assistant != assistant) {
          turns_.push_back(Turn{assistant, items_.size(), items_.size()});
        }
        items_.push_back(Item{&p, is_system});
        turns_.back().end = items_.size();
      }
    }
    if (request_.response_format.kind == ir::ResponseFormat::Kind::kJsonObject) {
      json_instruction_.text = kJsonObjectInstruction;
      system_.push_back(&json_instruction_);
    }
    return {};
  }

  Result<void> add_system_part(const ir::ContentPart& p, const char* param) {
    if (p.kind != PartKind::kText) {
      return bad("the system prompt can only hold text", param);
    }
    if (kept(p, stats_)) {
      system_.push_back(&p);
    }
    return {};
  }

  Result<void> write_system() {
    if (system_.empty()) {
      return {};
    }
    w_.raw(R"("system":[)");
    for (std::size_t i = 0; i < system_.size(); ++i) {
      if (i > 0) {
        w_.ch(',');
      }
      w_.raw(R"({"text":)").string(system_[i]->text).ch('}');
      if (auto r = write_cache_point(w_, *system_[i], "system"); !r) {
        return r;
      }
    }
    w_.ch(']');
    return {};
  }

  Result<void> write_turn(const Turn& turn) {
    w_.raw(turn.assistant ? R"({"role":"assistant","content":[)" : R"({"role":"user","content":[)");
    for (std::size_t i = turn.begin; i < turn.end; ++i) {
      if (i > turn.begin) {
        w_.ch(',');
      }
      if (auto r = write_part(items_[i]); !r) {
        return r;
      }
    }
    w_.raw("]}");
    return {};
  }

  Result<void> write_part(const Item& item) {
    const ir::ContentPart& p = *item.part;
    Result<void> written;
    switch (p.kind) {
      case PartKind::kText:
        w_.raw(R"({"text":")");
        if (item.system_prefix) {
          w_.raw(kSystemPrefix);
        }
        codec::append_json_escaped(w_.out(), p.text);
        w_.raw("\"}");
        break;
      case PartKind::kImage:
        written = write_image(w_, p);
        break;
      case PartKind::kToolCall:
        written = write_tool_use(p);
        break;
      case PartKind::kToolResult:
        written = write_tool_result(p);
        break;
      case PartKind::kReasoning:
        w_.raw(R"({"reasoningContent":{"reasoningText":{"text":)")
            .string(p.text)
            .raw(R"(,"signature":)")
            .string(p.signature)
            .raw("}}}");
        break;
      case PartKind::kRedactedReasoning:
        w_.raw(R"({"reasoningContent":{"redactedContent":)").string(p.signature).raw("}}");
        break;
    }
    if (!written) {
      return written;
    }
    return write_cache_point(w_, p, "messages");
  }

  Result<void> write_tool_use(const ir::ContentPart& p) {
    if (p.id.empty()) {
      return bad("a tool call ('" + p.name + "') has no id; this model's provider needs one to " +
                     "pair it with its result",
                 "messages");
    }
    if (!valid_tool_name(p.name)) {
      return bad(describe_call(p) +
                     ": this model's provider takes tool names of 1 to 64 letters, digits, '_' "
                     "or '-'",
                 "messages");
    }
    const std::string_view input = p.arguments.empty() ? std::string_view("{}") : p.arguments;
    switch (check_object(input)) {
      case JsonCheck::kObject:
        break;
      case JsonCheck::kNotObject:
        return bad(describe_call(p) + ": arguments must be a JSON object", "messages");
      case JsonCheck::kInvalid:
        return bad(describe_call(p) + ": arguments are not valid JSON", "messages");
      case JsonCheck::kTooDeep:
        return bad(describe_call(p) + ": arguments nest deeper than " +
                       std::to_string(kMaxNestedDepth) + " levels",
                   "messages");
    }
    w_.raw(R"({"toolUse":{"toolUseId":)").string(tool_use_id(p.id));
    w_.raw(R"(,"name":)").string(p.name);
    w_.raw(R"(,"input":)").raw(input).raw("}}");
    return {};
  }

  Result<void> write_tool_result(const ir::ContentPart& p) {
    if (p.id.empty()) {
      return bad(
          "a tool result has no tool call id; this model's provider needs it to pair the "
          "result with its call",
          "messages");
    }
    w_.raw(R"({"toolResult":{"toolUseId":)").string(tool_use_id(p.id));
    w_.raw(R"(,"content":[)");
    bool first = true;
    bool cache_point = false;
    for (const ir::ContentPart& r : p.parts) {
      if (r.kind != PartKind::kText && r.kind != PartKind::kImage) {
        return bad("tool results can only hold text and images", "messages");
      }
      if (!kept(r, stats_)) {
        continue;
      }
      if (!first) {
        w_.ch(',');
      }
      first = false;
      if (r.kind == PartKind::kText) {
        w_.raw(R"({"text":)").string(r.text).ch('}');
      } else if (auto ok = write_image(w_, r); !ok) {
        return ok;
      }
      cache_point = cache_point || r.cache_breakpoint;
    }
    w_.ch(']');
    if (p.is_error) {
      w_.raw(R"(,"status":"error")");
    }
    w_.raw("}}");
    // ToolResultContentBlock has no cachePoint member: a breakpoint inside the result caches
    // up to the end of the result.
    if (cache_point && !p.cache_breakpoint) {
      ir::ContentPart marker;
      marker.cache_breakpoint = true;
      return write_cache_point(w_, marker, "messages");
    }
    return {};
  }

  Result<void> write_inference_config(std::optional<std::uint64_t> max_tokens) {
    const std::size_t start = w_.out().size();
    w_.raw(R"(,"inferenceConfig":{)");
    const std::size_t body = w_.out().size();
    auto sep = [&] {
      if (w_.out().size() > body) {
        w_.ch(',');
      }
    };
    if (max_tokens) {
      w_.raw(R"("maxTokens":)").number(*max_tokens);
    }
    // Negated comparisons so that NaN fails too.
    if (const auto& t = request_.temperature) {
      if (!(*t >= 0.0 && *t <= 1.0)) {
        return out_of_unit_range("temperature", *t);
      }
      sep();
      w_.raw(R"("temperature":)").number(*t);
    }
    if (const auto& p = request_.top_p) {
      if (!(*p >= 0.0 && *p <= 1.0)) {
        return out_of_unit_range("top_p", *p);
      }
      sep();
      w_.raw(R"("topP":)").number(*p);
    }
    if (!request_.stop.empty()) {
      if (request_.stop.size() > kMaxStopSequences) {
        return bad("this model's provider takes at most " + std::to_string(kMaxStopSequences) +
                       " stop sequences",
                   "stop");
      }
      sep();
      w_.raw(R"("stopSequences":[)");
      for (std::size_t i = 0; i < request_.stop.size(); ++i) {
        if (request_.stop[i].empty()) {
          return bad("stop sequences must not be empty for this model's provider", "stop");
        }
        if (i > 0) {
          w_.ch(',');
        }
        w_.string(request_.stop[i]);
      }
      w_.ch(']');
    }
    if (w_.out().size() == body) {
      w_.out().resize(start);
    } else {
      w_.ch('}');
    }
    return {};
  }

  Result<void> write_tool_config() {
    const std::vector<ir::Tool>& tools = request_.tools;
    const ir::ToolChoice& choice = request_.tool_choice;
    if (tools.empty()) {
      if (choice.mode == ir::ToolChoiceMode::kRequired ||
          choice.mode == ir::ToolChoiceMode::kNamed) {
        return bad("tool_choice asks for a tool call but the request defines no tools",
                   "tool_choice");
      }
      return {};
    }
    if (choice.mode == ir::ToolChoiceMode::kNone) {
      if (has_tool_blocks_) {
        return bad(
            "tool_choice 'none' cannot be sent to this model's provider for a conversation "
            "that holds tool calls or results: Amazon Bedrock then requires the tool "
            "definitions and has no way to forbid calling them",
            "tool_choice");
      }
      return {};
    }
    w_.raw(R"(,"toolConfig":{"tools":[)");
    for (std::size_t i = 0; i < tools.size(); ++i) {
      const ir::Tool& t = tools[i];
      std::string param = "tools[" + std::to_string(i) + "]";
      if (!valid_tool_name(t.name)) {
        return bad("tool '" + t.name +
                       "': this model's provider takes tool names of 1 to 64 letters, digits, "
                       "'_' or '-'",
                   std::move(param));
      }
      const std::string_view schema = t.parameters.empty() ? kEmptySchema : t.parameters;
      switch (check_object(schema)) {
        case JsonCheck::kObject:
          break;
        case JsonCheck::kNotObject:
        case JsonCheck::kInvalid:
          return bad("tool '" + t.name + "': parameters must be a JSON Schema object",
                     std::move(param));
        case JsonCheck::kTooDeep:
          return bad("tool '" + t.name + "': parameters nest deeper than " +
                         std::to_string(kMaxNestedDepth) + " levels",
                     std::move(param));
      }
      if (i > 0) {
        w_.ch(',');
      }
      w_.raw(R"({"toolSpec":{"name":)").string(t.name);
      if (!t.description.empty()) {
        w_.raw(R"(,"description":)").string(t.description);
      }
      w_.raw(R"(,"inputSchema":{"json":)").raw(schema).raw("}}}");
      if (t.cache_breakpoint) {
        w_.raw(R"(,{"cachePoint":{"type":"default"}})");
      }
    }
    w_.ch(']');
    switch (choice.mode) {
      case ir::ToolChoiceMode::kUnset:
      case ir::ToolChoiceMode::kNone:
        break;
      case ir::ToolChoiceMode::kAuto:
        w_.raw(R"(,"toolChoice":{"auto":{}})");
        break;
      case ir::ToolChoiceMode::kRequired:
        w_.raw(R"(,"toolChoice":{"any":{}})");
        break;
      case ir::ToolChoiceMode::kNamed:
        if (!valid_tool_name(choice.name)) {
          return bad("tool_choice names tool '" + choice.name +
                         "', which is not a tool name this model's provider takes",
                     "tool_choice");
        }
        w_.raw(R"(,"toolChoice":{"tool":{"name":)").string(choice.name).raw("}}");
        break;
    }
    w_.ch('}');
    return {};
  }

  bool reasoning_requested() const {
    const ir::Reasoning& r = request_.reasoning;
    return r.enabled && r.effort != "none";
  }

  // The budget to send (0: none or adaptive), adjusting max_tokens so the budget stays below it.
  Result<void> thinking_budget(std::optional<std::uint64_t>& max_tokens,
                               std::uint32_t& budget) const {
    if (!reasoning_requested()) {
      return {};
    }
    const ir::Reasoning& r = request_.reasoning;
    if (!claude_) {
      return bad(
          "reasoning controls are translated only for Anthropic Claude models on Amazon "
          "Bedrock; this route's model takes other fields",
          "reasoning_effort");
    }
    bool from_effort = false;
    if (r.budget_tokens) {
      budget = std::max(*r.budget_tokens, kMinThinkingBudget);
    } else if (!r.effort.empty()) {
      const std::uint32_t* b = effort_budget(r.effort);
      if (b == nullptr) {
        return bad("reasoning_effort '" + r.effort +
                       "' is not supported for this model's provider; use none, minimal, low, "
                       "medium, high or xhigh",
                   "reasoning_effort");
      }
      budget = std::max(*b, kMinThinkingBudget);
      from_effort = true;
    } else {
      return {};  // adaptive
    }
    if (!max_tokens) {
      max_tokens = static_cast<std::uint64_t>(budget) + options_.answer_tokens;
    } else {
      if (from_effort && budget >= *max_tokens) {
        budget = static_cast<std::uint32_t>(
            std::max<std::uint64_t>(*max_tokens - 1, kMinThinkingBudget));
      }
      if (budget >= *max_tokens) {
        *max_tokens += budget;
      }
    }
    if (*max_tokens > std::numeric_limits<std::uint32_t>::max()) {
      return bad("the reasoning budget (" + std::to_string(budget) +
                     ") and max_tokens together exceed what this model's provider accepts",
                 "max_tokens");
    }
    return {};
  }

  const std::uint32_t* effort_budget(std::string_view effort) const {
    const EffortBudgets& b = options_.effort_budgets;
    if (effort == "minimal") {
      return &b.minimal;
    }
    if (effort == "low") {
      return &b.low;
    }
    if (effort == "medium") {
      return &b.medium;
    }
    if (effort == "high") {
      return &b.high;
    }
    if (effort == "xhigh") {
      return &b.xhigh;
    }
    return nullptr;
  }

  void write_additional_fields(std::uint32_t budget) {
    const bool thinking = claude_ && reasoning_requested();
    if (!request_.top_k && !thinking) {
      return;
    }
    w_.raw(R"(,"additionalModelRequestFields":{)");
    if (request_.top_k) {
      w_.raw(R"("top_k":)").number(static_cast<std::uint64_t>(*request_.top_k));
    }
    if (thinking) {
      w_.raw(request_.top_k ? R"(,"thinking":)" : R"("thinking":)");
      if (budget > 0) {
        w_.raw(R"({"type":"enabled","budget_tokens":)")
            .number(static_cast<std::uint64_t>(budget))
            .ch('}');
      } else {
        w_.raw(R"({"type":"adaptive"})");
      }
    }
    w_.ch('}');
  }

  void write_output_config() {
    const ir::ResponseFormat& f = request_.response_format;
    if (f.kind != ir::ResponseFormat::Kind::kJsonSchema) {
      return;
    }
    const std::string_view schema = f.schema.empty() ? kEmptySchema : f.schema;
    w_.raw(R"(,"outputConfig":{"textFormat":{"type":"json_schema","structure":{"jsonSchema":{)");
    w_.raw(R"("schema":)").string(schema);
    if (!f.name.empty()) {
      w_.raw(R"(,"name":)").string(f.name);
    }
    if (!f.description.empty()) {
      w_.raw(R"(,"description":)").string(f.description);
    }
    w_.raw("}}}}");
  }

  const ir::Request& request_;
  const bool claude_;
  const EncodeOptions& options_;
  EncodeStats& stats_;
  JsonWriter w_;
  std::vector<const ir::ContentPart*> system_;
  ir::ContentPart json_instruction_;
  std::vector<Item> items_;
  std::vector<Turn> turns_;
  bool has_tool_blocks_ = false;
};

std::size_t estimate_size(const ir::Request& request) {
  std::size_t n = 256;
  for (const ir::ContentPart& p : request.system) {
    n += p.text.size() + 64;
  }
  for (const ir::Message& m : request.messages) {
    n += 32;
    for (const ir::ContentPart& p : m.content) {
      n += p.text.size() + p.source.size() + p.arguments.size() + p.signature.size() + p.id.size() +
           p.name.size() + 96;
      for (const ir::ContentPart& r : p.parts) {
        n += r.text.size() + r.source.size() + 64;
      }
    }
  }
  for (const ir::Tool& t : request.tools) {
    n += t.name.size() + t.description.size() + t.parameters.size() + 96;
  }
  return n + n / 8;
}

}  // namespace

Result<std::string> encode_request(const ir::Request& request, std::string_view model,
                                   const EncodeOptions& options, EncodeStats* stats) {
  std::string out;
  out.reserve(estimate_size(request));
  EncodeStats local;
  Encoder encoder(request, model, options, stats != nullptr ? *stats : local, out);
  if (auto r = encoder.encode(); !r) {
    return std::move(r).error();
  }
  return out;
}

}  // namespace sluice::protocol::bedrock_converse
