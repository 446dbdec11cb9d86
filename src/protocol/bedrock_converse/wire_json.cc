#include "protocol/bedrock_converse/wire_json.h"

#include <string>

#include "codec/json_compact.h"
#include "codec/json_read.h"
#include "protocol/drift.h"

namespace sluice::protocol::bedrock_converse::wire {
namespace json = boost::json;

namespace {

Error protocol_error(std::string message) {
  return Error(ErrorKind::kUpstreamProtocol, std::move(message));
}

Result<ir::ContentPart> tool_use(const json::value& v, Drift* drift) {
  if (!v.is_object()) {
    return protocol_error("upstream toolUse block is not an object");
  }
  const json::object& o = v.get_object();
  auto id = string_at(o, "toolUseId");
  auto name = string_at(o, "name");
  if (!id || !name) {
    return protocol_error("upstream toolUse block lacks toolUseId or name");
  }
  if (auto type = string_at(o, "type"); type && *type == "server_tool_use") {
    return protocol_error("cannot translate content block 'toolUse' of type server_tool_use");
  }
  ir::ContentPart part;
  part.kind = ir::PartKind::kToolCall;
  part.id.assign(*id);
  part.name.assign(*name);
  const json::value* input = o.if_contains("input");
  if (input == nullptr || input->is_null()) {
    part.arguments = "{}";
  } else if (input->is_object()) {
    codec::append_compact_json(part.arguments, *input);
  } else {
    return protocol_error("upstream toolUse input is not an object");
  }
  if (drift != nullptr) {
    drift->fields(o, known::kToolUse);
  }
  return part;
}

Result<ir::ContentPart> reasoning(const json::value& v, Drift* drift) {
  if (!v.is_object()) {
    return protocol_error("upstream reasoningContent block is not an object");
  }
  const json::object& o = v.get_object();
  ir::ContentPart part;
  if (const json::value* rt = o.if_contains("reasoningText"); rt != nullptr && rt->is_object()) {
    const json::object& text = rt->get_object();
    auto t = string_at(text, "text");
    if (!t) {
      return protocol_error("upstream reasoningText lacks text");
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
  return protocol_error(
      "cannot translate reasoningContent without reasoningText or "
      "redactedContent");
}

}  // namespace

std::optional<std::string_view> string_at(const json::object& o, std::string_view key) {
  const json::value* v = o.if_contains(key);
  if (v == nullptr || !v->is_string()) {
    return std::nullopt;
  }
  return std::string_view(v->get_string().data(), v->get_string().size());
}

Result<ir::ContentPart> content_block(const json::value& block, Drift* drift) {
  if (!block.is_object() || block.get_object().empty()) {
    return protocol_error("upstream content block is not a non-empty object");
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
    return protocol_error("cannot translate content block '" + std::string(key) + "'");
  }
  return protocol_error("upstream content block has more than one member");
}

Result<void> read_usage(const json::value& value, WireUsage& usage) {
  if (!value.is_object()) {
    return protocol_error("upstream usage is not an object");
  }
  const json::object& o = value.get_object();
  struct Field {
    std::string_view key;
    std::uint64_t* target;
  };
  const Field fields[] = {
      {"inputTokens", &usage.input_tokens},
      {"outputTokens", &usage.output_tokens},
      {"cacheReadInputTokens", &usage.cache_read_input_tokens},
      {"cacheWriteInputTokens", &usage.cache_write_input_tokens},
  };
  for (const Field& f : fields) {
    const json::value* v = o.if_contains(f.key);
    if (v == nullptr || v->is_null()) {
      continue;
    }
    auto n = codec::as_count(*v);
    if (!n) {
      return protocol_error("upstream usage." + std::string(f.key) +
                            " is not a non-negative integer");
    }
    *f.target = *n;
  }
  return {};
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
