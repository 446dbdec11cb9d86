#include "protocol/openai_chat/errors.h"

#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

#include "codec/json_read.h"
#include "codec/json_writer.h"

namespace sluice::protocol::openai_chat {
namespace json = boost::json;

namespace {

std::string_view type_for(const Error& e) {
  if (e.kind() == ErrorKind::kRateLimited && e.code() == "insufficient_quota") {
    return "insufficient_quota";  // the gateway's budgets: OpenAI's type for a spent quota
  }
  switch (e.kind()) {
    case ErrorKind::kBadRequest:
    case ErrorKind::kNotFound:
    case ErrorKind::kMethodNotAllowed:
    case ErrorKind::kPayloadTooLarge:
    case ErrorKind::kHeadersTooLarge:
    case ErrorKind::kRequestTimeout:
      return "invalid_request_error";
    case ErrorKind::kUnauthorized:
      return "authentication_error";
    case ErrorKind::kForbidden:
      return "permission_error";
    case ErrorKind::kRateLimited:
      return "rate_limit_error";
    case ErrorKind::kUpstreamTimeout:
      return "timeout_error";
    case ErrorKind::kUpstreamUnreachable:
    case ErrorKind::kUpstreamProtocol:
    case ErrorKind::kUpstreamStatus:
      return "upstream_error";
    default:
      return "server_error";
  }
}

std::string_view type_for_status(int status) {
  if (status == 401) {
    return "authentication_error";
  }
  if (status == 403) {
    return "permission_error";
  }
  if (status == 429) {
    return "rate_limit_error";
  }
  if (status >= 500) {
    return "server_error";
  }
  return "invalid_request_error";
}

// Written with JsonWriter: messages can quote upstream bytes, and the writer keeps the
// output valid JSON (malformed UTF-8 becomes U+FFFD).
std::string make(std::string_view message, std::string_view type, std::string_view param,
                 std::string_view code) {
  std::string out;
  codec::JsonWriter w(out);
  w.raw(R"({"error":{"message":)").string(message).raw(R"(,"type":)").string(type);
  w.raw(R"(,"param":)");
  param.empty() ? w.null() : w.string(param);
  w.raw(R"(,"code":)");
  code.empty() ? w.null() : w.string(code);
  w.raw("}}");
  return out;
}

}  // namespace

std::string encode_error(const Error& error) {
  std::string_view code = error.code();
  if (code.empty()) {
    code = to_string(error.kind());
  }
  return make(error.message(), type_for(error), error.param(), code);
}

bool is_error_body(std::string_view body) {
  boost::system::error_code ec;
  json::value doc = codec::parse_json(body, ec, {}, 32);
  if (ec || !doc.is_object()) {
    return false;
  }
  const json::value* e = doc.get_object().if_contains("error");
  if (e == nullptr || !e->is_object()) {
    return false;
  }
  const json::value* m = e->get_object().if_contains("message");
  return m != nullptr && m->is_string();
}

std::string encode_error_with_status(const Error& error, int& status) {
  status = error.http_status() >= 400 && error.http_status() <= 599 ? error.http_status() : 500;
  return encode_error(error);
}

std::string normalise_upstream_error(std::string_view body, int status,
                                     std::string_view provider_id) {
  boost::system::error_code ec;
  json::value doc = codec::parse_json(body, ec, {}, 32);
  std::string prefix =
      "upstream provider '" + std::string(provider_id) + "' returned " + std::to_string(status);
  if (!ec && doc.is_object()) {
    const json::object& obj = doc.get_object();
    if (const json::value* e = obj.if_contains("error"); e && e->is_object()) {
      if (const json::value* m = e->get_object().if_contains("message"); m && m->is_string()) {
        return std::string(body);
      }
    }
    // vLLM / FastAPI style: {"object":"error","message":...} or {"detail": ...}
    for (const char* field : {"message", "detail", "error"}) {
      if (const json::value* m = obj.if_contains(field); m && m->is_string()) {
        return make(prefix + ": " + std::string(m->get_string()), type_for_status(status), {},
                    "upstream_error");
      }
    }
  }
  return make(prefix, type_for_status(status), {}, "upstream_error");
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

}  // namespace sluice::protocol::openai_chat
