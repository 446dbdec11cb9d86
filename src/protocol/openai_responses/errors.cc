#include "protocol/openai_responses/errors.h"

#include <boost/json/value.hpp>

#include "codec/json_read.h"
#include "codec/json_writer.h"
#include "protocol/openai_responses/conventions.h"

namespace sluice::protocol::openai_responses {
namespace json = boost::json;

Error error_from_wire(const json::object& error) {
  const std::string_view type = string_at(error, "type").value_or("");
  const std::string_view code = string_at(error, "code").value_or("");
  const std::string_view message = string_at(error, "message").value_or("");
  auto is = [&](std::string_view a, std::string_view b = {}) {
    return type == a || code == a || (!b.empty() && (type == b || code == b));
  };
  int status = 502;
  if (is("invalid_request_error", "invalid_prompt")) {
    status = 400;
  } else if (is("authentication_error", "invalid_api_key")) {
    status = 401;
  } else if (is("permission_error")) {
    status = 403;
  } else if (is("not_found_error", "model_not_found")) {
    status = 404;
  } else if (is("rate_limit_error", "rate_limit_exceeded") || is("insufficient_quota")) {
    status = 429;
  } else if (is("server_error")) {
    status = 500;
  }
  Error out(ErrorKind::kUpstreamStatus, status,
            message.empty() ? std::string("upstream reported an error") : std::string(message));
  if (!code.empty()) {
    out.with_code(std::string(code));
  } else if (!type.empty()) {
    out.with_code(std::string(type));
  }
  if (auto param = string_at(error, "param"); param && !param->empty()) {
    return std::move(out).with_param(std::string(*param));
  }
  return out;
}

std::string_view error_type(const Error& error) {
  if (error.kind() == ErrorKind::kRateLimited && error.code() == "insufficient_quota") {
    return "insufficient_quota";  // the gateway's budgets: OpenAI's type for a spent quota
  }
  struct Row {
    ErrorKind kind;
    std::string_view type;
  };
  static constexpr Row kTypes[] = {
      {ErrorKind::kBadRequest, "invalid_request_error"},
      {ErrorKind::kNotFound, "invalid_request_error"},
      {ErrorKind::kMethodNotAllowed, "invalid_request_error"},
      {ErrorKind::kPayloadTooLarge, "invalid_request_error"},
      {ErrorKind::kHeadersTooLarge, "invalid_request_error"},
      {ErrorKind::kRequestTimeout, "invalid_request_error"},
      {ErrorKind::kUnauthorized, "authentication_error"},
      {ErrorKind::kForbidden, "permission_error"},
      {ErrorKind::kRateLimited, "rate_limit_error"},
      {ErrorKind::kUpstreamTimeout, "timeout_error"},
      {ErrorKind::kUpstreamUnreachable, "upstream_error"},
      {ErrorKind::kUpstreamProtocol, "upstream_error"},
      {ErrorKind::kUpstreamStatus, "upstream_error"},
  };
  for (const Row& row : kTypes) {
    if (row.kind == error.kind()) {
      return row.type;
    }
  }
  return "server_error";
}

int error_status(const Error& error) {
  const int status = error.http_status();
  return status >= 400 && status <= 599 ? status : 500;
}

std::string encode_error(const Error& error) {
  std::string out;
  codec::JsonWriter w(out);
  w.raw(R"({"error":{"message":)").string(error.message());
  w.raw(R"(,"type":)").string(error_type(error)).raw(R"(,"param":)");
  error.param().empty() ? w.null() : w.string(error.param());
  w.raw(R"(,"code":)")
      .string(error.code().empty() ? to_string(error.kind()) : std::string_view(error.code()));
  w.raw("}}");
  return out;
}

bool is_error_body(std::string_view body) {
  boost::system::error_code ec;
  json::value doc = codec::parse_json(body, ec, {}, 32);
  const json::object* o = ec ? nullptr : doc.if_object();
  const json::value* e = o != nullptr ? o->if_contains("error") : nullptr;
  const json::object* eo = e != nullptr ? e->if_object() : nullptr;
  return eo != nullptr && string_at(*eo, "message").has_value();
}

}  // namespace sluice::protocol::openai_responses
