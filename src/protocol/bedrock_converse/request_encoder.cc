#include "protocol/bedrock_converse/request_encoder.h"

#include <algorithm>
#include <cstddef>
#include <span>
#include <vector>

#include "codec/json_writer.h"
#include "protocol/bedrock_converse/conventions.h"
#include "protocol/claude_thinking.h"
#include "protocol/request_checks.h"
#include "protocol/turns.h"

namespace sluice::protocol::bedrock_converse {
using codec::JsonWriter;
using ir::PartKind;

namespace {

constexpr std::size_t kMaxStopSequences = 2500;  // InferenceConfigurationStopSequencesList

// Bodies are parsed with a nesting limit of kMaxJsonDepth. A tool call's input sits at level 7
// ({ messages [ { content [ { toolUse { input), a tool's schema at level 7 too
// ({ toolConfig { tools [ { toolSpec { inputSchema { json).
constexpr std::size_t kMaxNestedDepth = kMaxJsonDepth - 6;

Error out_of_unit_range(std::string_view field, double value) {
  return protocol::out_of_unit_range(field, value, "Amazon Bedrock");
}

Result<void> write_cache_point(JsonWriter& w, const ir::ContentPart& p, const char* param) {
  if (!p.cache_breakpoint) {
    return {};
  }
  if (!p.cache_ttl.empty() && p.cache_ttl != "5m" && p.cache_ttl != "1h") {
    return bad_request(
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
      return bad_request(
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
    return unsupported_image_type(p.media_type);
  }
  w.raw(R"({"image":{"format":)").string(format);
  w.raw(R"(,"source":{"bytes":)").string(p.source).raw("}}}");
  return {};
}

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
    if (auto r = group_turns(request_, stats_, conversation_); !r) {
      return r;
    }
    if (request_.max_tokens && *request_.max_tokens == 0) {
      return bad_request("max_tokens must be at least 1", "max_tokens");
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
    w_.raw(conversation_.system.empty() ? R"("messages":[)" : R"(,"messages":[)");
    if (auto r = write_each(w_, std::span<const Turn>(conversation_.turns),
                            [this](const Turn& turn) { return write_turn(turn); });
        !r) {
      return r;
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
  Result<void> write_system() {
    const std::vector<const ir::ContentPart*>& system = conversation_.system;
    if (system.empty()) {
      return {};
    }
    w_.raw(R"("system":[)");
    for (std::size_t i = 0; i < system.size(); ++i) {
      if (i > 0) {
        w_.ch(',');
      }
      w_.raw(R"({"text":)").string(system[i]->text).ch('}');
      if (auto r = write_cache_point(w_, *system[i], "system"); !r) {
        return r;
      }
    }
    w_.ch(']');
    return {};
  }

  Result<void> write_turn(const Turn& turn) {
    w_.raw(turn.assistant ? R"({"role":"assistant","content":[)" : R"({"role":"user","content":[)");
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
    Result<void> written;
    switch (p.kind) {
      case PartKind::kText:
        w_.raw(R"({"text":)");
        write_turn_text(w_, p, item.system_prefix);
        w_.ch('}');
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
    if (auto r = require_call_id(p); !r) {
      return r;
    }
    if (!valid_tool_name(p.name)) {
      return bad_request(
          describe_call(p) +
              ": this model's provider takes tool names of 1 to 64 letters, digits, '_' "
              "or '-'",
          "messages");
    }
    const std::string_view input = p.arguments.empty() ? std::string_view("{}") : p.arguments;
    if (auto r = check_arguments(p, check_object(input, kMaxNestedDepth), kMaxNestedDepth); !r) {
      return r;
    }
    w_.raw(R"({"toolUse":{"toolUseId":)").string(tool_use_id(p.id));
    w_.raw(R"(,"name":)").string(p.name);
    w_.raw(R"(,"input":)").raw(input).raw("}}");
    return {};
  }

  Result<void> write_tool_result(const ir::ContentPart& p) {
    if (auto r = require_result_id(p); !r) {
      return r;
    }
    w_.raw(R"({"toolResult":{"toolUseId":)").string(tool_use_id(p.id));
    w_.raw(R"(,"content":[)");
    bool first = true;
    bool cache_point = false;
    for (const ir::ContentPart& r : p.parts) {
      if (r.kind != PartKind::kText && r.kind != PartKind::kImage) {
        return bad_request("tool results can only hold text and images", "messages");
      }
      if (!keep_part(r, stats_)) {
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
        return bad_request("this model's provider takes at most " +
                               std::to_string(kMaxStopSequences) + " stop sequences",
                           "stop");
      }
      sep();
      w_.raw(R"("stopSequences":[)");
      for (std::size_t i = 0; i < request_.stop.size(); ++i) {
        if (request_.stop[i].empty()) {
          return bad_request("stop sequences must not be empty for this model's provider", "stop");
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
        return bad_request("tool_choice asks for a tool call but the request defines no tools",
                           "tool_choice");
      }
      return {};
    }
    if (choice.mode == ir::ToolChoiceMode::kNone) {
      if (conversation_.has_tool_blocks) {
        return bad_request(
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
        return bad_request(
            "tool '" + t.name +
                "': this model's provider takes tool names of 1 to 64 letters, digits, "
                "'_' or '-'",
            std::move(param));
      }
      const std::string_view schema = t.parameters.empty() ? kEmptySchema : t.parameters;
      if (auto r = check_schema(t, check_object(schema, kMaxNestedDepth), kMaxNestedDepth, param);
          !r) {
        return r;
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
          return bad_request("tool_choice names tool '" + choice.name +
                                 "', which is not a tool name this model's provider takes",
                             "tool_choice");
        }
        w_.raw(R"(,"toolChoice":{"tool":{"name":)").string(choice.name).raw("}}");
        break;
    }
    w_.ch('}');
    return {};
  }

  // The budget to send (0: none or adaptive), adjusting max_tokens so the budget stays below it
  // (claude_thinking.h fit_thinking_budget; without max_tokens, budget + answer_tokens).
  Result<void> thinking_budget(std::optional<std::uint64_t>& max_tokens,
                               std::uint32_t& budget) const {
    const ir::Reasoning& r = request_.reasoning;
    if (!thinking_requested(r)) {
      return {};
    }
    if (!claude_) {
      return bad_request(
          "reasoning controls are translated only for Anthropic Claude models on Amazon "
          "Bedrock; this route's model takes other fields",
          "reasoning_effort");
    }
    auto t = protocol::thinking_budget(r, options_.effort_budgets);
    if (!t) {
      return std::move(t).error();
    }
    if (t->budget == 0) {
      return {};  // adaptive
    }
    budget = t->budget;
    if (!max_tokens) {
      max_tokens = static_cast<std::uint64_t>(budget) + options_.answer_tokens;
      return check_max_tokens(budget, *max_tokens);
    }
    if (auto fit = fit_thinking_budget(*t, true, *max_tokens); !fit) {
      return fit;
    }
    budget = t->budget;
    return {};
  }

  void write_additional_fields(std::uint32_t budget) {
    const bool thinking = claude_ && thinking_requested(request_.reasoning);
    if (!request_.top_k && !thinking) {
      return;
    }
    w_.raw(R"(,"additionalModelRequestFields":{)");
    if (request_.top_k) {
      w_.raw(R"("top_k":)").number(static_cast<std::uint64_t>(*request_.top_k));
    }
    if (thinking) {
      w_.raw(request_.top_k ? R"(,"thinking":)" : R"("thinking":)");
      write_thinking(w_, budget);
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
  Conversation conversation_;
};

}  // namespace

Result<std::string> encode_request(const ir::Request& request, std::string_view model,
                                   const EncodeOptions& options, EncodeStats* stats) {
  std::string out;
  out.reserve(estimate_request_size(request));
  EncodeStats local;
  Encoder encoder(request, model, options, stats != nullptr ? *stats : local, out);
  if (auto r = encoder.encode(); !r) {
    return std::move(r).error();
  }
  return out;
}

}  // namespace sluice::protocol::bedrock_converse
