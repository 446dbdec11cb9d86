#include "protocol/bedrock_converse/wire_json.h"

#include <string>

#include "protocol/drift.h"

namespace sluice::protocol::bedrock_converse::wire {
namespace json = boost::json;

namespace {

using protocol::wire::upstream_error;

Result<ir::ContentPart> tool_use(const json::value& v, Drift* drift) {
  if (!v.is_object()) {
    return upstream_error("upstream toolUse block is not an object");
  }
  const json::object& o = v.get_object();
  auto id = string_at(o, "toolUseId");
  auto name = string_at(o, "name");
  if (!id || !name) {
    return upstream_error("upstream toolUse block lacks toolUseId or name");
  }
  if (auto type = string_at(o, "type"); type && *type == "server_tool_use") {
    return upstream_error("cannot translate content block 'toolUse' of type server_tool_use");
  }
  ir::ContentPart part;
  part.kind = ir::PartKind::kToolCall;
  part.id.assign(*id);
  part.name.assign(*name);
  if (auto r = protocol::wire::tool_input(o.if_contains("input"), "toolUse", part.arguments); !r) {
    return std::move(r).error();
  }
  if (drift != nullptr) {
    drift->fields(o, known::kToolUse);
  }
  return part;
}

Result<ir::ContentPart> reasoning(const json::value& v, Drift* drift) {
  if (!v.is_object()) {
    return upstream_error("upstream reasoningContent block is not an object");
  }
  const json::object& o = v.get_object();
  ir::ContentPart part;
  if (const json::value* rt = o.if_contains("reasoningText"); rt != nullptr && rt->is_object()) {
    const json::object& text = rt->get_object();
    auto t = string_at(text, "text");
    if (!t) {
      return upstream_error("upstream reasoningText lacks text");
    }
    part.kind = ir::PartKind::kReasoning;
    part.text.assign(*t);
    part.signature.assign(string_at(text, "signature").value_or(""));
    if (drift != nullptr) {
      drift->fields(text, known::kReasoningText);
    }
    return part;
  }
  if (auto data = string_at(o, "redactedContent")) {
    part.kind = ir::PartKind::kRedactedReasoning;
    part.signature.assign(*data);
    return part;
  }
  return upstream_error(
      "cannot translate reasoningContent without reasoningText or "
      "redactedContent");
}

}  // namespace

Result<ir::ContentPart> content_block(const json::value& block, Drift* drift) {
  if (!block.is_object() || block.get_object().empty()) {
    return upstream_error("upstream content block is not a non-empty object");
  }
  const json::object& o = block.get_object();
  if (o.size() == 1) {
    const auto& member = *o.begin();
    const std::string_view key(member.key().data(), member.key().size());
    if (key == "text" && member.value().is_string()) {
      return ir::ContentPart::make_text(std::string(member.value().get_string()));
    }
    if (key == "toolUse") {
      return tool_use(member.value(), drift);
    }
    if (key == "reasoningContent") {
      return reasoning(member.value(), drift);
    }
    return upstream_error("cannot translate content block '" + std::string(key) + "'");
  }
  return upstream_error("upstream content block has more than one member");
}

Result<ir::Usage> merge_usage(const json::value& value, WireUsage& usage, Drift& drift) {
  const protocol::wire::CountField fields[] = {
      {"inputTokens", &usage.input_tokens},
      {"outputTokens", &usage.output_tokens},
      {"cacheReadInputTokens", &usage.cache_read_input_tokens},
      {"cacheWriteInputTokens", &usage.cache_write_input_tokens},
  };
  if (auto r = protocol::wire::read_usage_counts(value, fields, known::kUsage, drift); !r) {
    return std::move(r).error();
  }
  return from_wire_usage(usage);
}

std::string_view stop_sequence(const json::object& answer_or_event) {
  const json::value* fields = answer_or_event.if_contains("additionalModelResponseFields");
  if (fields == nullptr || !fields->is_object()) {
    return {};
  }
  const json::object& f = fields->get_object();
  if (auto s = string_at(f, "stop_sequence")) {
    return *s;
  }
  if (const json::value* d = f.if_contains("delta"); d != nullptr && d->is_object()) {
    return string_at(d->get_object(), "stop_sequence").value_or("");
  }
  return {};
}

}  // namespace sluice::protocol::bedrock_converse::wire
