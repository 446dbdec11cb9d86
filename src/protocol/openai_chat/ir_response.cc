#include "protocol/openai_chat/ir_response.h"

#include <boost/json/monotonic_resource.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

#include "codec/json_read.h"
#include "protocol/drift.h"
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

}  // namespace

ir::FinishReason finish_reason_from_openai(std::string_view reason) {
  if (reason == "stop") {
    return ir::FinishReason::kStop;
  }
  if (reason == "length") {
    return ir::FinishReason::kLength;
  }
  if (reason == "tool_calls" || reason == "function_call") {
    return ir::FinishReason::kToolCalls;
  }
  if (reason == "content_filter") {
    return ir::FinishReason::kContentFilter;
  }
  return ir::FinishReason::kOther;
}

Error error_from_openai(std::string_view message, std::string_view type, std::string_view code,
                        int numeric_code, std::string_view param) {
  int status = 502;
  if (numeric_code >= 400 && numeric_code <= 599) {
    status = numeric_code;
  } else if (type == "not_found_error" || code == "model_not_found") {
    status = 404;
  } else if (type == "rate_limit_error" || type == "insufficient_quota" ||
             code == "rate_limit_exceeded" || code == "insufficient_quota") {
    status = 429;
  } else if (type == "invalid_request_error") {
    status = 400;
  } else if (type == "authentication_error") {
    status = 401;
  } else if (type == "permission_error") {
    status = 403;
  } else if (type == "server_error") {
    status = 500;
  }
  std::string text =
      message.empty() ? std::string("upstream reported an error") : std::string(message);
  Error error(ErrorKind::kUpstreamStatus, status, std::move(text));
  if (!code.empty()) {
    error.with_code(std::string(code));
  }
  if (!param.empty()) {
    return std::move(error).with_param(std::string(param));
  }
  return error;
}

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

}  // namespace sluice::protocol::openai_chat
