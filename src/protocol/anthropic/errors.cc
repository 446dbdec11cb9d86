#include "protocol/anthropic/errors.h"

#include <array>
#include <utility>

#include "codec/json_writer.h"

namespace sluice::protocol::anthropic {

namespace {

struct TypeStatus {
  std::string_view type;
  int status;
};

constexpr std::array<TypeStatus, 11> kTypes = {{
    {"invalid_request_error", 400},
    {"authentication_error", 401},
    {"billing_error", 402},
    {"permission_error", 403},
    {"not_found_error", 404},
    {"conflict_error", 409},
    {"request_too_large", 413},
    {"rate_limit_error", 429},
    {"api_error", 500},
    {"timeout_error", 504},
    {"overloaded_error", 529},
}};

}  // namespace

std::string_view error_type_for_status(int status) {
  for (const TypeStatus& t : kTypes) {
    if (t.status == status) {
      return t.type;
    }
  }
  if (status == 503) {
    return "overloaded_error";
  }
  if (status >= 400 && status < 500) {
    return "invalid_request_error";
  }
  return "api_error";
}

bool is_error_type(std::string_view type) {
  for (const TypeStatus& t : kTypes) {
    if (t.type == type) {
      return true;
    }
  }
  return false;
}

std::string_view error_type(const Error& error) {
  if (is_error_type(error.code())) {
    return error.code();
  }
  switch (error.kind()) {
    case ErrorKind::kBadRequest:
    case ErrorKind::kMethodNotAllowed:
    case ErrorKind::kHeadersTooLarge:
    case ErrorKind::kRequestTimeout:
      return "invalid_request_error";
    case ErrorKind::kUnauthorized:
      return "authentication_error";
    case ErrorKind::kForbidden:
      return "permission_error";
    case ErrorKind::kNotFound:
      return "not_found_error";
    case ErrorKind::kPayloadTooLarge:
      return "request_too_large";
    case ErrorKind::kRateLimited:
      return "rate_limit_error";
    case ErrorKind::kUnavailable:
      return "overloaded_error";
    case ErrorKind::kUpstreamTimeout:
      return "timeout_error";
    case ErrorKind::kUpstreamStatus:
      return error_type_for_status(error.http_status());
    case ErrorKind::kUpstreamUnreachable:
    case ErrorKind::kUpstreamProtocol:
    case ErrorKind::kClientGone:
    case ErrorKind::kInternal:
      return "api_error";
  }
  return "api_error";
}

int error_status(const Error& error) {
  const int status = error.http_status();
  return status >= 400 && status <= 599 ? status : 500;
}

void append_error_json(std::string& out, std::string_view type, std::string_view message) {
  codec::JsonWriter w(out);
  w.raw(R"({"type":"error","error":{"type":)")
      .string(type)
      .ch(',')
      .key("message")
      .string(message)
      .raw("}}");
}

std::string encode_error(std::string_view type, std::string_view message) {
  std::string out;
  out.reserve(64 + type.size() + message.size());
  append_error_json(out, type, message);
  return out;
}

std::string encode_error(const Error& error) {
  return encode_error(error_type(error), error.message());
}

Error error_from_wire(std::string_view type, std::string message) {
  int status = 500;
  for (const TypeStatus& t : kTypes) {
    if (t.type == type) {
      status = t.status;
    }
  }
  return Error(ErrorKind::kUpstreamStatus, status, std::move(message)).with_code(std::string(type));
}

}  // namespace sluice::protocol::anthropic
