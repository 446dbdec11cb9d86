#include "protocol/openai_chat/chat_request.h"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

namespace sluice::protocol::openai_chat {
namespace json = boost::json;

namespace {

Error bad_request(std::string message, std::string param = {}) {
  Error e(ErrorKind::kBadRequest, std::move(message));
  if (!param.empty()) {
    return std::move(e).with_param(std::move(param));
  }
  return e;
}

Result<json::value> parse_object(std::string_view body) {
  if (body.empty()) {
    return bad_request("request body is empty; expected a JSON object");
  }
  json::parse_options opts;
  opts.max_depth = kMaxJsonDepth;
  boost::system::error_code ec;
  json::value doc = json::parse(body, ec, json::storage_ptr(), opts);
  if (ec) {
    return bad_request("request body is not valid JSON: " + ec.message());
  }
  if (!doc.is_object()) {
    return bad_request("request body must be a JSON object");
  }
  return doc;
}

Result<std::string> read_model(const json::object& obj) {
  const json::value* model = obj.if_contains("model");
  if (model == nullptr) {
    return bad_request("you must provide a model parameter", "model");
  }
  if (!model->is_string() || model->get_string().empty()) {
    return bad_request("'model' must be a non-empty string", "model");
  }
  return std::string(model->get_string());
}

}  // namespace

Result<ChatRequest> decode_chat_request(std::string_view body) {
  auto doc = parse_object(body);
  if (!doc) {
    return doc.error();
  }
  ChatRequest req;
  const json::object& obj = doc->get_object();
  auto model = read_model(obj);
  if (!model) {
    return model.error();
  }
  req.model = std::move(*model);
  const json::value* messages = obj.if_contains("messages");
  if (messages == nullptr) {
    return bad_request("missing required parameter: 'messages'", "messages");
  }
  if (!messages->is_array() || messages->get_array().empty()) {
    return bad_request("'messages' must be a non-empty array", "messages");
  }
  for (const json::value& m : messages->get_array()) {
    if (!m.is_object() || !m.get_object().contains("role")) {
      return bad_request("each message must be an object with a 'role'", "messages");
    }
  }
  if (const json::value* stream = obj.if_contains("stream"); stream && !stream->is_null()) {
    if (!stream->is_bool()) {
      return bad_request("'stream' must be a boolean", "stream");
    }
    req.stream = stream->get_bool();
  }
  if (const json::value* so = obj.if_contains("stream_options"); so && !so->is_null()) {
    if (!so->is_object()) {
      return bad_request("'stream_options' must be an object", "stream_options");
    }
    if (const json::value* iu = so->get_object().if_contains("include_usage")) {
      if (!iu->is_bool()) {
        return bad_request("'stream_options.include_usage' must be a boolean",
                           "stream_options.include_usage");
      }
      req.include_usage = iu->get_bool();
    }
  }
  req.document = std::move(*doc);
  return req;
}

Result<ChatRequest> decode_embeddings_request(std::string_view body) {
  auto doc = parse_object(body);
  if (!doc) {
    return doc.error();
  }
  ChatRequest req;
  const json::object& obj = doc->get_object();
  auto model = read_model(obj);
  if (!model) {
    return model.error();
  }
  req.model = std::move(*model);
  const json::value* input = obj.if_contains("input");
  if (input == nullptr) {
    return bad_request("missing required parameter: 'input'", "input");
  }
  bool ok = input->is_string() || (input->is_array() && !input->get_array().empty());
  if (ok && input->is_array()) {
    const json::array& arr = input->get_array();
    for (const json::value& v : arr) {
      if (!(v.is_string() || v.is_int64() || v.is_uint64() || v.is_array())) {
        ok = false;
        break;
      }
    }
  }
  if (!ok) {
    return bad_request("'input' must be a string, an array of strings, or an array of token arrays",
                       "input");
  }
  req.document = std::move(*doc);
  return req;
}

std::string encode_upstream_body(ChatRequest& request, std::string_view upstream_model,
                                 bool force_include_usage) {
  json::object& obj = request.document.as_object();
  obj["model"] = upstream_model;
  if (force_include_usage && request.stream && !request.include_usage) {
    json::value& so = obj["stream_options"];
    if (!so.is_object()) {
      so = json::object();
    }
    so.as_object()["include_usage"] = true;
  }
  return json::serialize(request.document);
}

}  // namespace sluice::protocol::openai_chat
