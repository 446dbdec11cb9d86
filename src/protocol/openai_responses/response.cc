#include "protocol/openai_responses/response.h"

#include <boost/json/monotonic_resource.hpp>
#include <boost/json/value.hpp>

#include "codec/json_read.h"
#include "codec/json_writer.h"
#include "protocol/drift.h"
#include "protocol/openai_responses/conventions.h"
#include "protocol/openai_responses/errors.h"
#include "protocol/wire_json.h"

namespace sluice::protocol::openai_responses {
namespace json = boost::json;
using ir::PartKind;

namespace {

Error protocol_error(std::string message) {
  return Error(ErrorKind::kUpstreamProtocol, std::move(message));
}

Result<void> read_message(const json::object& item, std::vector<ir::ContentPart>& out,
                          Drift& drift) {
  const json::value* content = item.if_contains("content");
  if (content == nullptr || !content->is_array()) {
    return protocol_error("upstream message item has no content array");
  }
  for (const json::value& v : content->get_array()) {
    const json::object* part = v.if_object();
    const std::string_view type =
        part != nullptr ? string_at(*part, "type").value_or("") : std::string_view();
    const char* key = type == "output_text" ? "text" : type == "refusal" ? "refusal" : nullptr;
    const auto text = key != nullptr ? string_at(*part, key) : std::nullopt;
    if (!text) {
      return protocol_error("cannot translate message content of type '" + std::string(type) + "'");
    }
    out.push_back(ir::ContentPart::make_text(std::string(*text)));
    drift.fields(*part, known::kPart);
  }
  return {};
}

Result<bool> read_item(const json::value& v, std::vector<ir::ContentPart>& out, Drift& drift) {
  const json::object* item = v.if_object();
  if (item == nullptr) {
    return protocol_error("upstream output item is not an object");
  }
  const std::string_view type = string_at(*item, "type").value_or("");
  if (type == "message" || type == "function_call" || type == "reasoning") {
    drift.fields(*item, known::kItem);
  }
  if (type == "message") {
    if (auto ok = read_message(*item, out, drift); !ok) {
      return ok.error();
    }
    return false;
  }
  if (type == "function_call") {
    const auto call_id = string_at(*item, "call_id");
    const auto name = string_at(*item, "name");
    if (!call_id || !name) {
      return protocol_error("upstream function_call item lacks call_id or name");
    }
    ir::ContentPart& part = out.emplace_back();
    part.kind = PartKind::kToolCall;
    part.id.assign(*call_id);
    part.name.assign(*name);
    part.arguments.assign(string_at(*item, "arguments").value_or(""));
    if (part.arguments.empty()) {
      part.arguments = "{}";
    }
    return true;
  }
  if (type == "reasoning") {
    if (!read_reasoning_item(*item, string_at(*item, "id").value_or(""), out)) {
      return protocol_error("upstream reasoning item has a malformed summary");
    }
    return false;
  }
  return protocol_error("cannot translate output item '" + std::string(type) + "'");
}

Result<void> check_parts(const ir::Response& response) {
  for (const ir::ContentPart& part : response.content) {
    if (part.kind == PartKind::kImage || part.kind == PartKind::kToolResult) {
      return protocol_error("a response cannot contain image or tool_result content");
    }
  }
  return {};
}

}  // namespace

std::string item_id(std::string_view prefix, std::string_view response_id, std::size_t index) {
  if (response_id.starts_with("resp_")) {
    response_id.remove_prefix(5);
  }
  std::string out;
  out.reserve(prefix.size() + response_id.size() + 8);
  out.append(prefix).push_back('_');
  out.append(response_id).push_back('_');
  out.append(std::to_string(index));
  return out;
}

Result<ir::Response> decode_response(std::string_view body) {
  codec::SmallDocumentArena arena;
  auto doc = protocol::wire::parse_answer(body, "response", arena);
  if (!doc) {
    return std::move(doc).error();
  }
  const json::object* root = &doc->get_object();
  const json::value* error = root->if_contains("error");
  const std::string_view status = string_at(*root, "status").value_or("");
  if (error != nullptr && error->is_object() &&
      (status.empty() || status == "failed" || !root->contains("output"))) {
    return error_from_wire(error->get_object());
  }
  if (status != "completed" && status != "incomplete") {
    return protocol_error("cannot translate a response whose status is '" + std::string(status) +
                          "'");
  }
  ir::Response out;
  Drift drift;
  drift.fields(*root, known::kResponse);
  out.id.assign(string_at(*root, "id").value_or(""));
  out.model.assign(string_at(*root, "model").value_or(""));
  if (const json::value* created = root->if_contains("created_at")) {
    if (auto n = codec::as_count(*created)) {
      out.created = static_cast<std::int64_t>(*n);
    } else if (created->is_double()) {
      out.created = static_cast<std::int64_t>(created->get_double());
    }
  }
  bool tool_calls = false;
  if (const json::value* output = root->if_contains("output"); output != nullptr) {
    if (!output->is_array()) {
      return protocol_error("upstream response output is not an array");
    }
    for (const json::value& item : output->get_array()) {
      auto is_call = read_item(item, out.content, drift);
      if (!is_call) {
        return std::move(is_call).error();
      }
      tool_calls = tool_calls || *is_call;
    }
  }
  std::string_view reason;
  if (const json::value* details = root->if_contains("incomplete_details");
      details != nullptr && details->is_object()) {
    reason = string_at(details->get_object(), "reason").value_or("");
  }
  out.finish = finish_from_status(status, reason, tool_calls);
  if (const json::value* usage = root->if_contains("usage");
      usage != nullptr && !usage->is_null()) {
    auto read = read_usage(*usage);
    if (!read) {
      return std::move(read).error();
    }
    out.usage = *read;
    drift.fields(usage->get_object(), known::kUsage);
  }
  out.unknown_fields = drift.count();
  return out;
}

void begin_response_object(codec::JsonWriter& w, const ResponseEnvelope& e) {
  w.raw(R"({"id":)").string(e.id).raw(R"(,"object":"response","created_at":)").number(e.created);
  w.raw(R"(,"status":)").string(e.status).raw(R"(,"completed_at":)");
  e.status == "completed" ? w.number(e.created) : w.null();
  w.raw(R"(,"error":null,"incomplete_details":)");
  if (e.incomplete_reason.empty()) {
    w.null();
  } else {
    w.raw(R"({"reason":)").string(e.incomplete_reason).ch('}');
  }
  w.raw(R"(,"instructions":null,"max_output_tokens":null,"model":)").string(e.model);
  w.raw(R"(,"output":[)");
}

void end_response_object(codec::JsonWriter& w, const ir::Usage* usage) {
  w.raw(R"(],"parallel_tool_calls":true,"previous_response_id":null,)");
  w.raw(R"("reasoning":{"effort":null,"summary":null},"store":false,"temperature":null,)");
  w.raw(R"("text":{"format":{"type":"text"}},"tool_choice":"auto","tools":[],"top_p":null,)");
  w.raw(R"("truncation":"disabled","usage":)");
  if (usage != nullptr) {
    append_usage_json(w.out(), *usage);
  } else {
    w.null();
  }
  w.raw(R"(,"metadata":{}})");
}

namespace {

// Text: std::string_view, or codec::EscapedText (a stream's accumulated text).
template <typename Text>
void output_text(codec::JsonWriter& w, const Text& text) {
  w.raw(R"({"type":"output_text","annotations":[],"logprobs":[],"text":)").string(text).ch('}');
}

template <typename Text>
void function_call_item(codec::JsonWriter& w, std::string_view id, std::string_view status,
                        const Text& arguments, std::string_view call_id, std::string_view name,
                        std::string_view space) {
  w.raw(R"({"id":)").string(id).raw(R"(,"type":"function_call","status":)").string(status);
  w.raw(R"(,"arguments":)").string(arguments).raw(R"(,"call_id":)").string(call_id);
  w.raw(R"(,"name":)").string(name);
  if (!space.empty()) {
    w.raw(R"(,"namespace":)").string(space);
  }
  w.ch('}');
}

}  // namespace

void write_output_text(codec::JsonWriter& w, std::string_view text) { output_text(w, text); }

void write_output_text(codec::JsonWriter& w, const codec::EscapedText& text) {
  output_text(w, text);
}

void write_function_call_item(codec::JsonWriter& w, std::string_view id, std::string_view status,
                              std::string_view arguments, std::string_view call_id,
                              std::string_view name, std::string_view space) {
  function_call_item(w, id, status, arguments, call_id, name, space);
}

void write_function_call_item(codec::JsonWriter& w, std::string_view id, std::string_view status,
                              const codec::EscapedText& arguments, std::string_view call_id,
                              std::string_view name, std::string_view space) {
  function_call_item(w, id, status, arguments, call_id, name, space);
}

void write_custom_tool_call_item(codec::JsonWriter& w, std::string_view id, std::string_view status,
                                 std::string_view input, std::string_view call_id,
                                 std::string_view name, std::string_view space) {
  w.raw(R"({"id":)").string(id).raw(R"(,"type":"custom_tool_call","status":)").string(status);
  w.raw(R"(,"call_id":)").string(call_id).raw(R"(,"input":)").string(input);
  w.raw(R"(,"name":)").string(name);
  if (!space.empty()) {
    w.raw(R"(,"namespace":)").string(space);
  }
  w.ch('}');
}

Result<std::string> encode_response(const ir::Response& response, std::int64_t created,
                                    const ToolNames* names) {
  if (auto ok = check_parts(response); !ok) {
    return ok.error();
  }
  const std::string id = response_id(response.id);
  std::size_t estimate = 640 + id.size() + response.model.size();
  for (const ir::ContentPart& part : response.content) {
    estimate += 160 + part.text.size() + part.arguments.size() + part.signature.size();
  }
  std::string out;
  out.reserve(estimate);
  codec::JsonWriter w(out);
  const std::string_view reason = incomplete_reason(response.finish);
  begin_response_object(w, {.id = id,
                            .model = response.model,
                            .created = created,
                            .status = reason.empty() ? "completed" : "incomplete",
                            .incomplete_reason = reason});
  const std::vector<ir::ContentPart>& parts = response.content;
  std::size_t items = 0;
  std::size_t tool = 0;
  for (std::size_t i = 0; i < parts.size(); ++items) {
    if (items > 0) {
      w.ch(',');
    }
    const ir::ContentPart& part = parts[i];
    if (part.kind == PartKind::kText) {
      w.raw(R"({"id":)").string(item_id("msg", id, items));
      w.raw(R"(,"type":"message","status":"completed","content":[)");
      for (std::size_t first = i; i < parts.size() && parts[i].kind == PartKind::kText; ++i) {
        if (i > first) {
          w.ch(',');
        }
        write_output_text(w, parts[i].text);
      }
      w.raw(R"(],"role":"assistant"})");
    } else if (part.kind == PartKind::kToolCall) {
      const CallerTool* caller = names != nullptr ? names->find(part.name) : nullptr;
      const std::string call_id = part.id.empty() ? item_id("call", id, tool) : part.id;
      const std::string_view arguments =
          part.arguments.empty() ? std::string_view("{}") : std::string_view(part.arguments);
      if (caller != nullptr && caller->custom) {
        write_custom_tool_call_item(w, item_id("ctc", id, items), "completed",
                                    custom_tool_input(part.arguments), call_id, caller->name,
                                    caller->space);
      } else if (caller != nullptr) {
        write_function_call_item(w, item_id("fc", id, items), "completed", arguments, call_id,
                                 caller->name, caller->space);
      } else {
        write_function_call_item(w, item_id("fc", id, items), "completed", arguments, call_id,
                                 part.name);
      }
      ++tool;
      ++i;
    } else {
      const std::size_t end = reasoning_run_end(parts, i);
      write_reasoning_item(w, part.id.empty() ? item_id("rs", id, items) : part.id, parts, i, end);
      i = end;
    }
  }
  end_response_object(w, response.usage ? &*response.usage : nullptr);
  return out;
}

}  // namespace sluice::protocol::openai_responses
