#include "protocol/anthropic/request_encoder.h"

#include <cstddef>
#include <span>
#include <vector>

#include "codec/json_writer.h"
#include "protocol/anthropic/conventions.h"
#include "protocol/claude_thinking.h"
#include "protocol/request_checks.h"
#include "protocol/turns.h"

namespace sluice::protocol::anthropic {
using codec::JsonWriter;
using ir::PartKind;

namespace {

// decode_request (and the API) parse the body with a nesting limit of kMaxJsonDepth. A tool
// call's input object sits at level 6 ({ messages [ { content [ { input), a tool's
// input_schema at level 4 ({ tools [ { input_schema): the deepest JSON text each may hold.
constexpr std::size_t kMaxArgumentsDepth = kMaxJsonDepth - 5;
constexpr std::size_t kMaxSchemaDepth = kMaxJsonDepth - 3;

Error out_of_unit_range(std::string_view field, double value) {
  return protocol::out_of_unit_range(field, value, "Anthropic");
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
  w.raw(R"({"type":"text","text":)");
  write_turn_text(w, p, system_prefix);
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
      return unsupported_image_type(p.media_type);
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

class Encoder {
 public:
  Encoder(const ir::Request& request, const EncodeOptions& options, EncodeStats& stats,
          std::string& out)
      : request_(request), options_(options), stats_(stats), w_(out) {}

  Result<void> encode(std::string_view model, bool stream) {
    if (auto r = group_turns(request_, stats_, conversation_); !r) {
      return r;
    }
    std::uint64_t max_tokens = request_.max_tokens.value_or(options_.default_max_tokens);
    if (max_tokens == 0) {
      return bad_request("max_tokens must be at least 1", "max_tokens");
    }
    std::uint32_t budget = 0;
    if (auto r = thinking_budget(max_tokens, budget); !r) {
      return r;
    }

    w_.raw(R"({"model":)").string(model);
    w_.raw(R"(,"max_tokens":)").number(max_tokens);
    write_system();
    w_.raw(R"(,"messages":[)");
    if (auto r = write_each(w_, std::span<const Turn>(conversation_.turns),
                            [this](const Turn& turn) { return write_turn(turn); });
        !r) {
      return r;
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
  void write_system() {
    const std::vector<const ir::ContentPart*>& system = conversation_.system;
    if (system.empty()) {
      return;
    }
    w_.raw(R"(,"system":)");
    if (system.size() == 1 && !system.front()->cache_breakpoint) {
      w_.string(system.front()->text);
      return;
    }
    w_.ch('[');
    for (std::size_t i = 0; i < system.size(); ++i) {
      if (i > 0) {
        w_.ch(',');
      }
      write_text_block(w_, *system[i], false);
    }
    w_.ch(']');
  }

  Result<void> write_turn(const Turn& turn) {
    w_.raw(turn.assistant ? R"({"role":"assistant","content":)" : R"({"role":"user","content":)");
    const TurnPart& first = conversation_.parts[turn.begin];
    if (turn.end - turn.begin == 1 && first.part->kind == PartKind::kText &&
        !first.part->cache_breakpoint) {
      write_turn_text(w_, *first.part, first.system_prefix);
      w_.ch('}');
      return {};
    }
    w_.ch('[');
    if (auto r = write_each(w_, parts_of(conversation_, turn),
                            [this](const TurnPart& part) { return write_part(part); });
        !r) {
      return r;
    }
    w_.raw("]}");
    return {};
  }

  Result<void> write_part(const TurnPart& item) {
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
    if (auto r = require_call_id(p); !r) {
      return r;
    }
    if (auto r =
            check_arguments(p, check_object(p.arguments, kMaxArgumentsDepth), kMaxArgumentsDepth);
        !r) {
      return r;
    }
    w_.raw(R"({"type":"tool_use","id":)").string(tool_use_id(p.id));
    w_.raw(R"(,"name":)").string(p.name);
    w_.raw(R"(,"input":)").raw(p.arguments);
    write_cache_control(w_, p);
    w_.ch('}');
    return {};
  }

  Result<void> write_tool_result(const ir::ContentPart& p) {
    if (auto r = require_result_id(p); !r) {
      return r;
    }
    w_.raw(R"({"type":"tool_result","tool_use_id":)").string(tool_use_id(p.id));
    std::size_t n = 0;
    const ir::ContentPart* only = nullptr;
    for (const ir::ContentPart& r : p.parts) {
      if (r.kind != PartKind::kText && r.kind != PartKind::kImage) {
        return bad_request("tool results can only hold text and images", "messages");
      }
      if (keep_part(r, stats_)) {
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
          return bad_request("tool " + std::to_string(i) + " has no name", std::move(param));
        }
        const std::string_view schema = t.parameters.empty() ? kEmptySchema : t.parameters;
        if (auto r = check_schema(t, check_object(schema, kMaxSchemaDepth), kMaxSchemaDepth, param);
            !r) {
          return r;
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
  // budget stays below it (claude_thinking.h fit_thinking_budget).
  Result<void> thinking_budget(std::uint64_t& max_tokens, std::uint32_t& budget) const {
    const ir::Reasoning& r = request_.reasoning;
    if (!thinking_requested(r)) {
      return {};
    }
    if (options_.adaptive_thinking) {
      if (!r.effort.empty() && adaptive_effort(r.effort).empty()) {
        return unknown_effort(r.effort);
      }
      return {};
    }
    auto t = protocol::thinking_budget(r, options_.effort_budgets);
    if (!t) {
      return std::move(t).error();
    }
    if (t->budget == 0) {
      return {};  // adaptive
    }
    if (auto fit = fit_thinking_budget(*t, request_.max_tokens.has_value(), max_tokens); !fit) {
      return fit;
    }
    budget = t->budget;
    return {};
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

  void write_thinking(std::uint32_t budget) {
    if (!thinking_requested(request_.reasoning)) {
      return;
    }
    w_.raw(R"(,"thinking":)");
    protocol::write_thinking(w_, budget);
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
  Conversation conversation_;
};

}  // namespace

Result<std::string> encode_request(const ir::Request& request, std::string_view upstream_model,
                                   bool stream, const EncodeOptions& options, EncodeStats* stats) {
  std::string out;
  out.reserve(estimate_request_size(request));
  EncodeStats local;
  Encoder encoder(request, options, stats != nullptr ? *stats : local, out);
  if (auto r = encoder.encode(upstream_model, stream); !r) {
    return std::move(r).error();
  }
  return out;
}

}  // namespace sluice::protocol::anthropic
