#include "protocol/anthropic/request_encoder.h"

#include <algorithm>
#include <cstddef>
#include <limits>
#include <vector>

#include <boost/json/monotonic_resource.hpp>

#include "codec/json_read.h"
#include "codec/json_writer.h"
#include "protocol/anthropic/conventions.h"

namespace sluice::protocol::anthropic {
namespace json = boost::json;
using codec::JsonWriter;
using ir::PartKind;

namespace {

constexpr std::string_view kEmptySchema = R"({"type":"object"})";
constexpr std::string_view kSystemPrefix = "System: ";
constexpr std::string_view kJsonObjectInstruction =
    "Respond with a single JSON object and nothing else.";
constexpr std::uint32_t kMinThinkingBudget = 1024;  // "Must be >= 1024 and less than max_tokens"

// decode_request (and the API) parse the body with a nesting limit of kMaxJsonDepth. A tool
// call's input object sits at level 6 ({ messages [ { content [ { input), a tool's
// input_schema at level 4 ({ tools [ { input_schema): the deepest JSON text each may hold.
constexpr std::size_t kMaxArgumentsDepth = kMaxJsonDepth - 5;
constexpr std::size_t kMaxSchemaDepth = kMaxJsonDepth - 3;

Error bad(std::string message, std::string param) {
  return Error(ErrorKind::kBadRequest, std::move(message)).with_param(std::move(param));
}

// "temperature 1.5 is out of range ...": the shortest form, as the caller wrote it.
Error out_of_unit_range(std::string_view field, double value) {
  std::string message(field);
  message.push_back(' ');
  JsonWriter(message).number(value);
  message.append(" is out of range for this model: its provider (Anthropic) accepts 0 to 1");
  return bad(std::move(message), std::string(field));
}

enum class JsonCheck { kObject, kNotObject, kInvalid, kTooDeep };

JsonCheck check_object(std::string_view text, std::size_t max_depth) {
  unsigned char arena[2048];
  json::monotonic_resource mr(arena, sizeof arena);
  boost::system::error_code ec;
  const json::value v = codec::parse_json(text, ec, &mr, max_depth);
  if (ec == json::error::too_deep) {
    return JsonCheck::kTooDeep;
  }
  if (ec) {
    return JsonCheck::kInvalid;
  }
  return v.is_object() ? JsonCheck::kObject : JsonCheck::kNotObject;
}

// "tool call 'call_1' (get_weather)" for error messages.
std::string describe_call(const ir::ContentPart& p) {
  std::string out = "tool call '";
  out.append(p.id);
  out.append("' (");
  out.append(p.name);
  out.push_back(')');
  return out;
}

void write_cache_control(JsonWriter& w, const ir::ContentPart& p) {
  if (!p.cache_breakpoint) {
    return;
  }
  w.raw(R"(,"cache_control":{"type":"ephemeral")");
  if (!p.cache_ttl.empty()) {
    w.raw(R"(,"ttl":)").string(p.cache_ttl);
  }
  w.ch('}');
}

void write_text_block(JsonWriter& w, const ir::ContentPart& p, bool system_prefix) {
  w.raw(R"({"type":"text","text":")");
  if (system_prefix) {
    w.raw(kSystemPrefix);
  }
  codec::append_json_escaped(w.out(), p.text);
  w.ch('"');
  write_cache_control(w, p);
  w.ch('}');
}

bool supported_media_type(std::string_view mt) {
  return mt == "image/jpeg" || mt == "image/png" || mt == "image/gif" || mt == "image/webp";
}

Result<void> write_image(JsonWriter& w, const ir::ContentPart& p) {
  if (p.image_is_url) {
    w.raw(R"({"type":"image","source":{"type":"url","url":)").string(p.source).ch('}');
  } else {
    if (!supported_media_type(p.media_type)) {
      return bad("image media type '" + p.media_type +
                     "' is not supported by this model's provider; use image/jpeg, image/png, "
                     "image/gif or image/webp",
                 "messages");
    }
    w.raw(R"({"type":"image","source":{"type":"base64","media_type":)")
        .string(p.media_type)
        .raw(R"(,"data":)")
        .string(p.source)
        .ch('}');
  }
  write_cache_control(w, p);
  w.ch('}');
  return {};
}

// A text part with content, or a reasoning part with a signature: what Anthropic can take.
// Everything else is written (or rejected) as it is.
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

// One part to write: a message part, and whether it came from a mid-conversation system
// message (written with kSystemPrefix).
struct Item {
  const ir::ContentPart* part;
  bool system_prefix;
};

// One Anthropic message: a role and its items [begin, end).
struct Turn {
  bool assistant;
  std::size_t begin;
  std::size_t end;
};

class Encoder {
 public:
  Encoder(const ir::Request& request, const EncodeOptions& options, EncodeStats& stats,
          std::string& out)
      : request_(request), options_(options), stats_(stats), w_(out) {}

  Result<void> encode(std::string_view model, bool stream) {
    if (auto r = collect(); !r) {
      return r;
    }
    if (turns_.empty()) {
      return bad(
          "the request has no user or assistant message with content; this model's provider "
          "needs at least one",
          "messages");
    }
    std::uint64_t max_tokens = request_.max_tokens.value_or(options_.default_max_tokens);
    if (max_tokens == 0) {
      return bad("max_tokens must be at least 1", "max_tokens");
    }
    std::uint32_t budget = 0;
    if (auto r = thinking_budget(max_tokens, budget); !r) {
      return r;
    }

    w_.raw(R"({"model":)").string(model);
    w_.raw(R"(,"max_tokens":)").number(max_tokens);
    write_system();
    w_.raw(R"(,"messages":[)");
    for (std::size_t t = 0; t < turns_.size(); ++t) {
      if (t > 0) {
        w_.ch(',');
      }
      if (auto r = write_turn(turns_[t]); !r) {
        return r;
      }
    }
    w_.ch(']');
    if (auto r = write_tools(); !r) {
      return r;
    }
    if (auto r = write_sampling(); !r) {
      return r;
    }
    if (!request_.user.empty()) {
      w_.raw(R"(,"metadata":{"user_id":)").string(request_.user).ch('}');
    }
    write_thinking(budget);
    write_output_config();
    if (stream) {
      w_.raw(R"(,"stream":true)");
    }
    w_.ch('}');
    return {};
  }

 private:
  // Splits the IR into the system prompt (system_) and merged turns (items_, turns_).
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
      // Anthropic has no schema-less JSON mode: the caller's "any JSON object" becomes an
      // instruction at the end of the system prompt.
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

  void write_system() {
    if (system_.empty()) {
      return;
    }
    w_.raw(R"(,"system":)");
    if (system_.size() == 1 && !system_.front()->cache_breakpoint) {
      w_.string(system_.front()->text);
      return;
    }
    w_.ch('[');
    for (std::size_t i = 0; i < system_.size(); ++i) {
      if (i > 0) {
        w_.ch(',');
      }
      write_text_block(w_, *system_[i], false);
    }
    w_.ch(']');
  }

  Result<void> write_turn(const Turn& turn) {
    w_.raw(turn.assistant ? R"({"role":"assistant","content":)" : R"({"role":"user","content":)");
    const Item& first = items_[turn.begin];
    if (turn.end - turn.begin == 1 && first.part->kind == PartKind::kText &&
        !first.part->cache_breakpoint) {
      w_.ch('"');
      if (first.system_prefix) {
        w_.raw(kSystemPrefix);
      }
      codec::append_json_escaped(w_.out(), first.part->text);
      w_.raw("\"}");
      return {};
    }
    w_.ch('[');
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
    switch (p.kind) {
      case PartKind::kText:
        write_text_block(w_, p, item.system_prefix);
        return {};
      case PartKind::kImage:
        return write_image(w_, p);
      case PartKind::kToolCall:
        return write_tool_use(p);
      case PartKind::kToolResult:
        return write_tool_result(p);
      case PartKind::kReasoning:
        w_.raw(R"({"type":"thinking","thinking":)")
            .string(p.text)
            .raw(R"(,"signature":)")
            .string(p.signature)
            .ch('}');
        return {};
      case PartKind::kRedactedReasoning:
        w_.raw(R"({"type":"redacted_thinking","data":)").string(p.signature).ch('}');
        return {};
    }
    return {};
  }

  Result<void> write_tool_use(const ir::ContentPart& p) {
    if (p.id.empty()) {
      return bad("a tool call ('" + p.name + "') has no id; this model's provider needs one to " +
                     "pair it with its result",
                 "messages");
    }
    switch (check_object(p.arguments, kMaxArgumentsDepth)) {
      case JsonCheck::kObject:
        break;
      case JsonCheck::kNotObject:
        return bad(describe_call(p) + ": arguments must be a JSON object", "messages");
      case JsonCheck::kInvalid:
        return bad(describe_call(p) + ": arguments are not valid JSON", "messages");
      case JsonCheck::kTooDeep:
        return bad(describe_call(p) + ": arguments nest deeper than " +
                       std::to_string(kMaxArgumentsDepth) + " levels",
                   "messages");
    }
    w_.raw(R"({"type":"tool_use","id":)").string(tool_use_id(p.id));
    w_.raw(R"(,"name":)").string(p.name);
    w_.raw(R"(,"input":)").raw(p.arguments);
    write_cache_control(w_, p);
    w_.ch('}');
    return {};
  }

  Result<void> write_tool_result(const ir::ContentPart& p) {
    if (p.id.empty()) {
      return bad(
          "a tool result has no tool call id; this model's provider needs it to pair the "
          "result with its call",
          "messages");
    }
    w_.raw(R"({"type":"tool_result","tool_use_id":)").string(tool_use_id(p.id));
    std::size_t n = 0;
    const ir::ContentPart* only = nullptr;
    for (const ir::ContentPart& r : p.parts) {
      if (r.kind != PartKind::kText && r.kind != PartKind::kImage) {
        return bad("tool results can only hold text and images", "messages");
      }
      if (kept(r, stats_)) {
        ++n;
        only = &r;
      }
    }
    if (n == 1 && only->kind == PartKind::kText && !only->cache_breakpoint) {
      w_.raw(R"(,"content":)").string(only->text);
    } else if (n > 0) {
      w_.raw(R"(,"content":[)");
      bool first = true;
      for (const ir::ContentPart& r : p.parts) {
        if (r.kind == PartKind::kText && r.text.empty()) {
          continue;  // counted above
        }
        if (!first) {
          w_.ch(',');
        }
        first = false;
        if (r.kind == PartKind::kText) {
          write_text_block(w_, r, false);
        } else if (auto ok = write_image(w_, r); !ok) {
          return ok;
        }
      }
      w_.ch(']');
    }
    if (p.is_error) {
      w_.raw(R"(,"is_error":true)");
    }
    write_cache_control(w_, p);
    w_.ch('}');
    return {};
  }

  Result<void> write_tools() {
    const std::vector<ir::Tool>& tools = request_.tools;
    if (!tools.empty()) {
      w_.raw(R"(,"tools":[)");
      for (std::size_t i = 0; i < tools.size(); ++i) {
        const ir::Tool& t = tools[i];
        std::string param = "tools[" + std::to_string(i) + "]";
        if (t.name.empty()) {
          return bad("tool " + std::to_string(i) + " has no name", std::move(param));
        }
        const std::string_view schema = t.parameters.empty() ? kEmptySchema : t.parameters;
        switch (check_object(schema, kMaxSchemaDepth)) {
          case JsonCheck::kObject:
            break;
          case JsonCheck::kNotObject:
          case JsonCheck::kInvalid:
            return bad("tool '" + t.name + "': parameters must be a JSON Schema object",
                       std::move(param));
          case JsonCheck::kTooDeep:
            return bad("tool '" + t.name + "': parameters nest deeper than " +
                           std::to_string(kMaxSchemaDepth) + " levels",
                       std::move(param));
        }
        if (i > 0) {
          w_.ch(',');
        }
        w_.raw(R"({"name":)").string(t.name);
        if (!t.description.empty()) {
          w_.raw(R"(,"description":)").string(t.description);
        }
        w_.raw(R"(,"input_schema":)").raw(schema);
        if (t.cache_breakpoint) {
          w_.raw(R"(,"cache_control":{"type":"ephemeral"})");
        }
        w_.ch('}');
      }
      w_.ch(']');
    }
    const ir::ToolChoice& choice = request_.tool_choice;
    const bool parallel_off = choice.disable_parallel_tool_use;
    switch (choice.mode) {
      case ir::ToolChoiceMode::kUnset:
        if (parallel_off && !tools.empty()) {
          w_.raw(R"(,"tool_choice":{"type":"auto","disable_parallel_tool_use":true})");
        }
        return {};
      case ir::ToolChoiceMode::kNone:
        w_.raw(R"(,"tool_choice":{"type":"none"})");
        return {};
      case ir::ToolChoiceMode::kAuto:
        w_.raw(R"(,"tool_choice":{"type":"auto")");
        break;
      case ir::ToolChoiceMode::kRequired:
        w_.raw(R"(,"tool_choice":{"type":"any")");
        break;
      case ir::ToolChoiceMode::kNamed:
        w_.raw(R"(,"tool_choice":{"type":"tool","name":)").string(choice.name);
        break;
    }
    if (parallel_off) {
      w_.raw(R"(,"disable_parallel_tool_use":true)");
    }
    w_.ch('}');
    return {};
  }

  Result<void> write_sampling() {
    // Negated comparisons so that NaN fails too.
    if (const auto& t = request_.temperature) {
      if (!(*t >= 0.0 && *t <= 1.0)) {
        return out_of_unit_range("temperature", *t);
      }
      w_.raw(R"(,"temperature":)").number(*t);
    }
    if (const auto& p = request_.top_p) {
      if (!(*p >= 0.0 && *p <= 1.0)) {
        return out_of_unit_range("top_p", *p);
      }
      w_.raw(R"(,"top_p":)").number(*p);
    }
    if (request_.top_k) {
      w_.raw(R"(,"top_k":)").number(static_cast<std::uint64_t>(*request_.top_k));
    }
    if (!request_.stop.empty()) {
      w_.raw(R"(,"stop_sequences":[)");
      for (std::size_t i = 0; i < request_.stop.size(); ++i) {
        if (i > 0) {
          w_.ch(',');
        }
        w_.string(request_.stop[i]);
      }
      w_.ch(']');
    }
    return {};
  }

  // The budget to send (0: none) for budget-style thinking, adjusting max_tokens so that the
  // budget stays below it (header comment).
  Result<void> thinking_budget(std::uint64_t& max_tokens, std::uint32_t& budget) const {
    const ir::Reasoning& r = request_.reasoning;
    if (!r.enabled || r.effort == "none") {
      return {};
    }
    if (options_.adaptive_thinking) {
      if (!r.effort.empty() && adaptive_effort(r.effort).empty()) {
        return unknown_effort(r.effort);
      }
      return {};
    }
    bool from_effort = false;
    if (r.budget_tokens) {
      budget = std::max(*r.budget_tokens, kMinThinkingBudget);
    } else if (!r.effort.empty()) {
      const std::uint32_t* b = effort_budget(r.effort);
      if (b == nullptr) {
        return unknown_effort(r.effort);
      }
      budget = std::max(*b, kMinThinkingBudget);
      from_effort = true;
    } else {
      return {};  // adaptive
    }
    if (from_effort && request_.max_tokens && budget >= max_tokens) {
      budget =
          static_cast<std::uint32_t>(std::max<std::uint64_t>(max_tokens - 1, kMinThinkingBudget));
    }
    if (budget >= max_tokens) {
      max_tokens += budget;
      if (max_tokens > std::numeric_limits<std::uint32_t>::max()) {
        return bad("the reasoning budget (" + std::to_string(budget) +
                       ") and max_tokens together exceed what this model's provider accepts",
                   "max_tokens");
      }
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

  static std::string_view adaptive_effort(std::string_view effort) {
    if (effort == "minimal" || effort == "low") {
      return "low";
    }
    if (effort == "medium" || effort == "high" || effort == "xhigh") {
      return effort;
    }
    return {};
  }

  static Error unknown_effort(std::string_view effort) {
    return bad("reasoning_effort '" + std::string(effort) +
                   "' is not supported for this model's provider; use none, minimal, low, "
                   "medium, high or xhigh",
               "reasoning_effort");
  }

  void write_thinking(std::uint32_t budget) {
    const ir::Reasoning& r = request_.reasoning;
    if (!r.enabled || r.effort == "none") {
      return;
    }
    if (budget > 0) {
      w_.raw(R"(,"thinking":{"type":"enabled","budget_tokens":)")
          .number(static_cast<std::uint64_t>(budget))
          .ch('}');
      return;
    }
    w_.raw(R"(,"thinking":{"type":"adaptive"})");
  }

  // One output_config object for what lives there: the adaptive-thinking effort and the
  // structured output format (json_schema only; json_object became a system instruction).
  void write_output_config() {
    const ir::Reasoning& r = request_.reasoning;
    const bool effort =
        options_.adaptive_thinking && r.enabled && r.effort != "none" && !r.effort.empty();
    const bool format = request_.response_format.kind == ir::ResponseFormat::Kind::kJsonSchema;
    if (!effort && !format) {
      return;
    }
    w_.raw(R"(,"output_config":{)");
    if (effort) {
      w_.raw(R"("effort":)").string(adaptive_effort(r.effort));
    }
    if (format) {
      w_.raw(effort ? R"(,"format":{"type":"json_schema","schema":)"
                    : R"("format":{"type":"json_schema","schema":)");
      const std::string& schema = request_.response_format.schema;
      w_.raw(schema.empty() ? std::string_view(R"({"type":"object"})") : schema).ch('}');
    }
    w_.ch('}');
  }

  const ir::Request& request_;
  const EncodeOptions& options_;
  EncodeStats& stats_;
  JsonWriter w_;
  std::vector<const ir::ContentPart*> system_;
  ir::ContentPart json_instruction_;
  std::vector<Item> items_;
  std::vector<Turn> turns_;
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
  return n + n / 8;  // escaping
}

}  // namespace

Result<std::string> encode_request(const ir::Request& request, std::string_view upstream_model,
                                   bool stream, const EncodeOptions& options, EncodeStats* stats) {
  std::string out;
  out.reserve(estimate_size(request));
  EncodeStats local;
  Encoder encoder(request, options, stats != nullptr ? *stats : local, out);
  if (auto r = encoder.encode(upstream_model, stream); !r) {
    return std::move(r).error();
  }
  return out;
}

}  // namespace sluice::protocol::anthropic
