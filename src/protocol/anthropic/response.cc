#include "protocol/anthropic/response.h"

#include <boost/json/monotonic_resource.hpp>

#include "codec/json_read.h"
#include "codec/json_writer.h"
#include "protocol/anthropic/conventions.h"
#include "protocol/anthropic/errors.h"
#include "protocol/anthropic/wire_json.h"
#include "protocol/drift.h"
#include "protocol/wire_json.h"

namespace sluice::protocol::anthropic {
namespace json = boost::json;

namespace {

Error protocol_error(std::string message) {
  return Error(ErrorKind::kUpstreamProtocol, std::move(message));
}

// Valid tool input: a JSON object. Empty text stands for {}.
bool is_json_object(std::string_view text) {
  if (text.empty()) {
    return true;
  }
  unsigned char arena[1024];
  json::monotonic_resource mr(arena, sizeof arena);
  boost::system::error_code ec;
  json::value v = codec::parse_json(text, ec, &mr, kMaxJsonDepth);
  return !ec && v.is_object();
}

}  // namespace

Result<std::string> encode_response(const ir::Response& response, bool* usage_clamped) {
  WireUsage usage;
  if (response.usage) {
    bool clamped = false;
    usage = to_wire_usage_clamped(*response.usage, clamped);
    if (usage_clamped != nullptr) {
      *usage_clamped = clamped;
    }
  }

  std::string out;
  std::size_t estimate = 256 + response.id.size() + response.model.size();
  for (const ir::ContentPart& part : response.content) {
    estimate += 64 + part.text.size() + part.arguments.size() + part.signature.size();
  }
  out.reserve(estimate);

  codec::JsonWriter w(out);
  const std::string id = message_id(response.id);
  w.ch('{').key("id").string(id).raw(R"(,"type":"message","role":"assistant",)");
  w.key("model").string(response.model).raw(R"(,"content":[)");
  std::size_t tool_index = 0;
  bool first = true;
  for (const ir::ContentPart& part : response.content) {
    if (!first) {
      w.ch(',');
    }
    first = false;
    switch (part.kind) {
      case ir::PartKind::kText:
        w.raw(R"({"type":"text","text":)").string(part.text).ch('}');
        break;
      case ir::PartKind::kReasoning:
        w.raw(R"({"type":"thinking","thinking":)")
            .string(part.text)
            .raw(R"(,"signature":)")
            .string(part.signature)
            .ch('}');
        break;
      case ir::PartKind::kRedactedReasoning:
        w.raw(R"({"type":"redacted_thinking","data":)").string(part.signature).ch('}');
        break;
      case ir::PartKind::kToolCall: {
        if (!is_json_object(part.arguments)) {
          return protocol_error("tool call '" + part.name +
                                "' has arguments that are not a JSON object; cannot encode "
                                "an Anthropic tool_use input");
        }
        const std::string seed = id + "_" + std::to_string(tool_index);
        w.raw(R"({"type":"tool_use","id":)")
            .string(tool_use_id_or(part.id, seed))
            .raw(R"(,"name":)")
            .string(part.name)
            .raw(R"(,"input":)")
            .raw(part.arguments.empty() ? std::string_view("{}") : part.arguments)
            .ch('}');
        ++tool_index;
        break;
      }
      case ir::PartKind::kImage:
      case ir::PartKind::kToolResult:
        return protocol_error("a response cannot contain image or tool_result content");
    }
  }
  w.raw(R"(],"stop_reason":)").string(stop_reason(response.finish)).raw(R"(,"stop_sequence":)");
  if (response.finish == ir::FinishReason::kStopSequence) {
    w.string(response.stop_sequence);
  } else {
    w.null();
  }
  w.raw(R"(,"usage":)");
  append_usage_json(out, usage);
  w.ch('}');
  return out;
}

Result<ir::Response> decode_response(std::string_view body) {
  codec::SmallDocumentArena arena;
  auto doc = protocol::wire::parse_answer(body, "message", arena);
  if (!doc) {
    return std::move(doc).error();
  }
  const json::object& o = doc->get_object();
  if (auto type = wire::string_at(o, "type"); type && *type == "error") {
    return wire::error_event(o);
  }
  ir::Response out;
  Drift drift;
  drift.fields(o, wire::known::kMessage);
  auto id = wire::string_at(o, "id");
  auto model = wire::string_at(o, "model");
  const json::value* content = o.if_contains("content");
  if (!id || !model || content == nullptr || !content->is_array()) {
    return protocol_error("upstream message lacks id, model or content");
  }
  out.id.assign(*id);
  out.model.assign(*model);
  const json::array& blocks = content->get_array();
  out.content.reserve(blocks.size());
  for (const json::value& b : blocks) {
    auto part = wire::content_block(b);
    if (!part) {
      return std::move(part).error();
    }
    out.content.push_back(std::move(*part));
    drift.fields(b.get_object(), wire::known::kBlock);
  }
  if (auto reason = wire::string_at(o, "stop_reason")) {
    out.finish = finish_reason(*reason);
  }
  if (auto seq = wire::string_at(o, "stop_sequence")) {
    out.stop_sequence.assign(*seq);
  }
  if (const json::value* u = o.if_contains("usage"); u != nullptr && !u->is_null()) {
    WireUsage usage;
    auto converted = wire::merge_usage(*u, usage, drift);
    if (!converted) {
      return std::move(converted).error();
    }
    out.usage = *converted;
  }
  out.unknown_fields = drift.count();
  return out;
}

}  // namespace sluice::protocol::anthropic
