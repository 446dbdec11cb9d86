#include "protocol/bedrock_converse/response.h"

#include "codec/json_read.h"
#include "protocol/bedrock_converse/conventions.h"
#include "protocol/bedrock_converse/errors.h"
#include "protocol/bedrock_converse/wire_json.h"
#include "protocol/drift.h"
#include "protocol/wire_json.h"

namespace sluice::protocol::bedrock_converse {
namespace json = boost::json;

using protocol::wire::upstream_error;

Result<ir::Response> decode_response(std::string_view body) {
  codec::SmallDocumentArena arena;
  auto doc = protocol::wire::parse_answer(body, "answer", arena);
  if (!doc) {
    return std::move(doc).error();
  }
  const json::object& o = doc->get_object();
  const json::value* output = o.if_contains("output");
  if (output == nullptr && (o.contains("message") || o.contains("Message"))) {
    return error_from_wire(body, "");
  }
  const json::value* message = output != nullptr && output->is_object()
                                   ? output->get_object().if_contains("message")
                                   : nullptr;
  const json::value* content = message != nullptr && message->is_object()
                                   ? message->get_object().if_contains("content")
                                   : nullptr;
  if (content == nullptr || !content->is_array()) {
    return upstream_error("upstream answer lacks output.message.content");
  }
  ir::Response out;
  Drift drift;
  drift.fields(o, wire::known::kAnswer);
  drift.fields(message->get_object(), wire::known::kMessage);
  const json::array& blocks = content->get_array();
  out.content.reserve(blocks.size());
  for (const json::value& b : blocks) {
    auto part = wire::content_block(b, &drift);
    if (!part) {
      return std::move(part).error();
    }
    out.content.push_back(std::move(*part));
  }
  if (auto reason = wire::string_at(o, "stopReason")) {
    out.finish = finish_reason(*reason);
  }
  out.stop_sequence.assign(wire::stop_sequence(o));
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

}  // namespace sluice::protocol::bedrock_converse
