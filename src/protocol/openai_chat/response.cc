#include "protocol/openai_chat/response.h"

#include <boost/json/monotonic_resource.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

#include "codec/json_read.h"
#include "codec/json_writer.h"
#include "protocol/drift.h"
#include "protocol/openai_chat/conventions.h"
#include "protocol/openai_chat/errors.h"
#include "protocol/openai_chat/known_fields.h"

namespace sluice::protocol::openai_chat {
namespace json = boost::json;

namespace {

Error protocol_error(std::string message) {
  return Error(ErrorKind::kUpstreamProtocol, "upstream chat.completion: " + std::move(message));
}

const json::value* field(const json::object& o, std::string_view key) {
  const json::value* v = o.if_contains(key);
  return (v == nullptr || v->is_null()) ? nullptr : v;
}

std::string_view string_or_empty(const json::object& o, std::string_view key) {
  const json::value* v = field(o, key);
  return (v && v->is_string()) ? std::string_view(v->get_string()) : std::string_view();
}

std::uint64_t count(const json::object& o, std::string_view key) {
  const json::value* v = field(o, key);
  return v == nullptr ? 0 : codec::as_count(*v).value_or(0);
}

ir::Usage usage_from(const json::object& u) {
  ir::Usage usage;
  usage.input_tokens = count(u, "prompt_tokens");
  usage.output_tokens = count(u, "completion_tokens");
  if (const json::value* d = field(u, "prompt_tokens_details"); d && d->is_object()) {
    usage.cache_read_tokens = count(d->get_object(), "cached_tokens");
  }
  if (const json::value* d = field(u, "completion_tokens_details"); d && d->is_object()) {
    usage.reasoning_tokens = count(d->get_object(), "reasoning_tokens");
  }
  return usage;
}

Error error_from_object(const json::object& e) {
  int numeric = 0;
  std::string_view code;
  if (const json::value* c = field(e, "code")) {
    if (c->is_string()) {
      code = c->get_string();
    } else if (c->is_int64()) {
      numeric = static_cast<int>(c->get_int64());
    } else if (c->is_uint64() && c->get_uint64() < 1000) {
      numeric = static_cast<int>(c->get_uint64());
    }
  }
  return error_from_openai(string_or_empty(e, "message"), string_or_empty(e, "type"), code, numeric,
                           string_or_empty(e, "param"));
}

Error unencodable(std::string message) {
  return Error(ErrorKind::kUpstreamProtocol, std::move(message));
}

// Tool arguments as the caller will parse them: any JSON text ("" stands for {}).
bool is_json(std::string_view text) {
  if (text.empty()) {
    return true;
  }
  unsigned char arena[1024];
  json::monotonic_resource mr(arena, sizeof arena);
  boost::system::error_code ec;
  (void)codec::parse_json(text, ec, &mr);
  return !ec;
}

}  // namespace

Result<ir::Response> decode_response(std::string_view body) {
  codec::SmallDocumentArena arena;
  boost::system::error_code ec;
  json::value doc = codec::parse_json(body, ec, &arena.resource);
  if (ec) {
    return protocol_error("invalid JSON: " + ec.message());
  }
  const json::object* root = doc.if_object();
  if (root == nullptr) {
    return protocol_error("body is not a JSON object");
  }
  if (const json::value* e = field(*root, "error"); e && e->is_object()) {
    return error_from_object(e->get_object());
  }
  if (string_or_empty(*root, "object") == "error") {  // vLLM's flat error body
    return error_from_object(*root);
  }
  const json::value* choices = field(*root, "choices");
  if (choices == nullptr || !choices->is_array() || choices->get_array().empty()) {
    return protocol_error("missing 'choices'");
  }
  const json::object* choice = choices->get_array()[0].if_object();
  const json::value* message = choice ? field(*choice, "message") : nullptr;
  if (message == nullptr || !message->is_object()) {
    return protocol_error("choices[0] has no 'message' object");
  }
  const json::object& msg = message->get_object();
  Drift drift;
  drift.fields(*root, known::kRoot);
  drift.fields(*choice, known::kChoice);
  drift.fields(msg, known::kMessage);

  ir::Response out;
  out.id = std::string(string_or_empty(*root, "id"));
  out.model = std::string(string_or_empty(*root, "model"));
  if (const json::value* c = field(*root, "created"); c && c->is_number()) {
    out.created = c->to_number<std::int64_t>(ec);
    if (ec) {
      out.created = 0;
    }
  }
  for (std::string_view key : {"reasoning_content", "reasoning"}) {
    std::string_view r = string_or_empty(msg, key);
    if (!r.empty()) {
      ir::ContentPart part;
      part.kind = ir::PartKind::kReasoning;
      part.text = std::string(r);
      out.content.push_back(std::move(part));
      break;
    }
  }
  if (const json::value* content = field(msg, "content")) {
    if (content->is_string()) {
      if (!content->get_string().empty()) {
        out.content.push_back(ir::ContentPart::make_text(std::string(content->get_string())));
      }
    } else if (content->is_array()) {
      for (const json::value& p : content->get_array()) {
        if (const json::object* po = p.if_object(); po && string_or_empty(*po, "type") == "text") {
          out.content.push_back(
              ir::ContentPart::make_text(std::string(string_or_empty(*po, "text"))));
        }
      }
    } else {
      return protocol_error("'message.content' is neither a string nor null");
    }
  }
  if (std::string_view refusal = string_or_empty(msg, "refusal"); !refusal.empty()) {
    out.content.push_back(ir::ContentPart::make_text(std::string(refusal)));
  }
  if (const json::value* calls = field(msg, "tool_calls")) {
    if (!calls->is_array()) {
      return protocol_error("'message.tool_calls' is not an array");
    }
    for (const json::value& cv : calls->get_array()) {
      const json::object* co = cv.if_object();
      const json::value* fn = co ? field(*co, "function") : nullptr;
      if (fn == nullptr || !fn->is_object()) {
        return protocol_error("a tool call has no 'function' object");
      }
      const json::object& fo = fn->get_object();
      drift.fields(*co, known::kToolCall);
      drift.fields(fo, known::kFunction);
      ir::ContentPart part;
      part.kind = ir::PartKind::kToolCall;
      part.id = std::string(string_or_empty(*co, "id"));
      part.name = std::string(string_or_empty(fo, "name"));
      if (const json::value* a = field(fo, "arguments"); a && a->is_object()) {
        part.arguments = json::serialize(*a);  // Ollama-style object arguments
      } else {
        part.arguments = std::string(string_or_empty(fo, "arguments"));
      }
      if (part.arguments.empty()) {
        part.arguments = "{}";
      }
      out.content.push_back(std::move(part));
    }
  }
  if (std::string_view fr = string_or_empty(*choice, "finish_reason"); !fr.empty()) {
    out.finish = finish_reason_from_openai(fr);
  }
  if (const json::value* u = field(*root, "usage"); u && u->is_object()) {
    out.usage = usage_from(u->get_object());
    drift.fields(u->get_object(), known::kUsage);
  }
  out.unknown_fields = drift.count();
  return out;
}

Result<std::string> encode_response(const ir::Response& response, std::int64_t created,
                                    std::uint32_t* dropped_parts) {
  std::uint32_t dropped = 0;
  bool has_reasoning = false;
  std::size_t tool_calls = 0;
  std::size_t estimate = 320 + response.id.size() + response.model.size();
  for (const ir::ContentPart& part : response.content) {
    estimate += 64 + part.text.size() + part.arguments.size() + part.id.size() + part.name.size();
    switch (part.kind) {
      case ir::PartKind::kText:
        break;
      case ir::PartKind::kReasoning:
        has_reasoning = true;
        dropped += part.signature.empty() ? 0 : 1;
        break;
      case ir::PartKind::kRedactedReasoning:
        ++dropped;
        break;
      case ir::PartKind::kToolCall:
        if (!is_json(part.arguments)) {
          return unencodable("tool call '" + part.name +
                             "' has arguments that are not JSON; cannot encode an OpenAI "
                             "tool call");
        }
        ++tool_calls;
        break;
      case ir::PartKind::kImage:
      case ir::PartKind::kToolResult:
        return unencodable("a response cannot contain image or tool_result content");
    }
  }
  if (dropped_parts != nullptr) {
    *dropped_parts = dropped;
  }

  // The parts of one kind joined into one JSON string: `content` and `reasoning_content`.
  auto joined = [&](codec::JsonWriter& w, ir::PartKind kind) {
    w.ch('"');
    for (const ir::ContentPart& part : response.content) {
      if (part.kind == kind) {
        codec::append_json_escaped(w.out(), part.text);
      }
    }
    w.ch('"');
  };

  std::string out;
  out.reserve(estimate);
  codec::JsonWriter w(out);
  const std::string id = completion_id(response.id);
  w.raw(R"({"id":)").string(id).raw(R"(,"object":"chat.completion","created":)").number(created);
  w.raw(R"(,"model":)").string(response.model);
  w.raw(R"(,"choices":[{"index":0,"message":{"role":"assistant","content":)");
  const bool has_text =
      std::any_of(response.content.begin(), response.content.end(),
                  [](const ir::ContentPart& p) { return p.kind == ir::PartKind::kText; });
  if (has_text || tool_calls == 0) {
    joined(w, ir::PartKind::kText);
  } else {
    w.null();
  }
  if (has_reasoning) {
    w.raw(R"(,"reasoning_content":)");
    joined(w, ir::PartKind::kReasoning);
  }
  if (tool_calls > 0) {
    w.raw(R"(,"tool_calls":[)");
    std::size_t n = 0;
    for (const ir::ContentPart& part : response.content) {
      if (part.kind != ir::PartKind::kToolCall) {
        continue;
      }
      if (n > 0) {
        w.ch(',');
      }
      w.raw(R"({"id":)");
      if (part.id.empty()) {
        w.string(id + "_call_" + std::to_string(n));
      } else {
        w.string(part.id);
      }
      w.raw(R"(,"type":"function","function":{"name":)")
          .string(part.name)
          .raw(R"(,"arguments":)")
          .string(part.arguments.empty() ? std::string_view("{}") : part.arguments)
          .raw("}}");
      ++n;
    }
    w.ch(']');
  }
  w.raw(R"(,"refusal":null},"logprobs":null,"finish_reason":)")
      .string(finish_reason_to_openai(response.finish))
      .raw("}]");
  if (response.usage) {
    w.raw(R"(,"usage":)");
    append_usage_json(out, *response.usage);
  }
  w.ch('}');
  return out;
}

}  // namespace sluice::protocol::openai_chat
