#include "protocol/request_checks.h"

#include "codec/json_writer.h"

namespace sluice::protocol {

Error bad_request(std::string message, std::string param) {
  return Error(ErrorKind::kBadRequest, std::move(message)).with_param(std::move(param));
}

Error out_of_unit_range(std::string_view field, double value, std::string_view provider) {
  std::string message(field);
  message.push_back(' ');
  codec::JsonWriter(message).number(value);
  message.append(" is out of range for this model: its provider (");
  message.append(provider);
  message.append(") accepts 0 to 1");
  return bad_request(std::move(message), std::string(field));
}

std::string describe_call(const ir::ContentPart& call) {
  std::string out = "tool call '";
  out.append(call.id);
  out.append("' (");
  out.append(call.name);
  out.push_back(')');
  return out;
}

Result<void> require_call_id(const ir::ContentPart& call) {
  if (call.id.empty()) {
    return bad_request("a tool call ('" + call.name +
                           "') has no id; this model's provider needs one to pair it with its "
                           "result",
                       "messages");
  }
  return {};
}

Result<void> require_result_id(const ir::ContentPart& result) {
  if (result.id.empty()) {
    return bad_request(
        "a tool result has no tool call id; this model's provider needs it to pair the result "
        "with its call",
        "messages");
  }
  return {};
}

Result<void> check_arguments(const ir::ContentPart& call, JsonCheck check, std::size_t max_depth) {
  switch (check) {
    case JsonCheck::kObject:
      return {};
    case JsonCheck::kNotObject:
      return bad_request(describe_call(call) + ": arguments must be a JSON object", "messages");
    case JsonCheck::kInvalid:
      return bad_request(describe_call(call) + ": arguments are not valid JSON", "messages");
    case JsonCheck::kTooDeep:
      return bad_request(describe_call(call) + ": arguments nest deeper than " +
                             std::to_string(max_depth) + " levels",
                         "messages");
  }
  return {};
}

Result<void> check_schema(const ir::Tool& tool, JsonCheck check, std::size_t max_depth,
                          const std::string& param) {
  switch (check) {
    case JsonCheck::kObject:
      return {};
    case JsonCheck::kNotObject:
    case JsonCheck::kInvalid:
      return bad_request("tool '" + tool.name + "': parameters must be a JSON Schema object",
                         param);
    case JsonCheck::kTooDeep:
      return bad_request("tool '" + tool.name + "': parameters nest deeper than " +
                             std::to_string(max_depth) + " levels",
                         param);
  }
  return {};
}

Error unsupported_image_type(const std::string& media_type) {
  return bad_request("image media type '" + media_type +
                         "' is not supported by this model's provider; use image/jpeg, "
                         "image/png, image/gif or image/webp",
                     "messages");
}

std::size_t estimate_request_size(const ir::Request& request) {
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

}  // namespace sluice::protocol
