#include "protocol/anthropic/wire_json.h"

#include <string>

#include "codec/json_read.h"
#include "protocol/anthropic/errors.h"

namespace sluice::protocol::anthropic::wire {
namespace json = boost::json;

namespace {

Error protocol_error(std::string message) {
  return Error(ErrorKind::kUpstreamProtocol, std::move(message));
}

Result<std::string_view> required(const json::object& o, std::string_view key,
                                  std::string_view block_type) {
  if (auto s = string_at(o, key)) {
    return *s;
  }
  return protocol_error("upstream " + std::string(block_type) + " block lacks string field '" +
                        std::string(key) + "'");
}

}  // namespace

std::optional<std::string_view> string_at(const json::object& o, std::string_view key) {
  const json::value* v = o.if_contains(key);
  if (v == nullptr || !v->is_string()) {
    return std::nullopt;
  }
  return std::string_view(v->get_string().data(), v->get_string().size());
}

Result<ir::ContentPart> content_block(const json::value& block) {
  if (!block.is_object()) {
    return protocol_error("upstream content block is not an object");
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
    const json::value* input = o.if_contains("input");
    if (input == nullptr || input->is_null()) {
      part.arguments = "{}";
    } else if (input->is_object()) {
      append_compact_json(part.arguments, *input);
    } else {
      return protocol_error("upstream tool_use input is not an object");
    }
  } else {
    return protocol_error("cannot translate content block '" + std::string(type) + "'");
  }
  return part;
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
      {"input_tokens", &usage.input_tokens},
      {"cache_creation_input_tokens", &usage.cache_creation_input_tokens},
      {"cache_read_input_tokens", &usage.cache_read_input_tokens},
      {"output_tokens", &usage.output_tokens},
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
  return protocol_error("upstream sent an error event without an error type");
}

}  // namespace sluice::protocol::anthropic::wire
