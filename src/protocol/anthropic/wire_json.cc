#include "protocol/anthropic/wire_json.h"

#include <string>

#include "protocol/anthropic/errors.h"

namespace sluice::protocol::anthropic::wire {
namespace json = boost::json;

namespace {

using protocol::wire::upstream_error;

Result<std::string_view> required(const json::object& o, std::string_view key,
                                  std::string_view block_type) {
  if (auto s = string_at(o, key)) {
    return *s;
  }
  return upstream_error("upstream " + std::string(block_type) + " block lacks string field '" +
                        std::string(key) + "'");
}

}  // namespace

Result<ir::ContentPart> content_block(const json::value& block) {
  if (!block.is_object()) {
    return upstream_error("upstream content block is not an object");
  }
  const json::object& o = block.get_object();
  const std::string_view type = string_at(o, "type").value_or("");
  ir::ContentPart part;
  if (type == "text") {
    auto text = required(o, "text", type);
    if (!text) {
      return std::move(text).error();
    }
    part.kind = ir::PartKind::kText;
    part.text.assign(*text);
  } else if (type == "thinking") {
    auto thinking = required(o, "thinking", type);
    if (!thinking) {
      return std::move(thinking).error();
    }
    part.kind = ir::PartKind::kReasoning;
    part.text.assign(*thinking);
    part.signature.assign(string_at(o, "signature").value_or(""));
  } else if (type == "redacted_thinking") {
    auto data = required(o, "data", type);
    if (!data) {
      return std::move(data).error();
    }
    part.kind = ir::PartKind::kRedactedReasoning;
    part.signature.assign(*data);
  } else if (type == "tool_use") {
    auto id = required(o, "id", type);
    if (!id) {
      return std::move(id).error();
    }
    auto name = required(o, "name", type);
    if (!name) {
      return std::move(name).error();
    }
    part.kind = ir::PartKind::kToolCall;
    part.id.assign(*id);
    part.name.assign(*name);
    if (auto r = protocol::wire::tool_input(o.if_contains("input"), "tool_use", part.arguments);
        !r) {
      return std::move(r).error();
    }
  } else {
    return upstream_error("cannot translate content block '" + std::string(type) + "'");
  }
  return part;
}

Result<ir::Usage> merge_usage(const json::value& value, WireUsage& usage, Drift& drift) {
  const protocol::wire::CountField fields[] = {
      {"input_tokens", &usage.input_tokens},
      {"cache_creation_input_tokens", &usage.cache_creation_input_tokens},
      {"cache_read_input_tokens", &usage.cache_read_input_tokens},
      {"output_tokens", &usage.output_tokens},
  };
  if (auto r = protocol::wire::read_usage_counts(value, fields, known::kUsage, drift); !r) {
    return std::move(r).error();
  }
  return from_wire_usage(usage);
}

Error error_event(const json::object& o) {
  const json::value* e = o.if_contains("error");
  if (e != nullptr && e->is_object()) {
    const json::object& err = e->get_object();
    auto type = string_at(err, "type");
    auto message = string_at(err, "message");
    if (type) {
      return error_from_wire(*type, std::string(message.value_or("")));
    }
  }
  return upstream_error("upstream sent an error event without an error type");
}

}  // namespace sluice::protocol::anthropic::wire
