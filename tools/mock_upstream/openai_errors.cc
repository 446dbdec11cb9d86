#include "openai_errors.h"

#include "json_text.h"

namespace sluice::mock {

std::string openai_error_body(std::string_view message, std::string_view type,
                              std::string_view param, std::string_view code) {
  std::string out = R"({"error":{"message":)";
  append_json_string(out, message);
  out += R"(,"type":)";
  append_json_string(out, type);
  out += R"(,"param":)";
  if (param.empty()) {
    out += "null";
  } else {
    append_json_string(out, param);
  }
  out += R"(,"code":)";
  if (code.empty()) {
    out += "null";
  } else {
    append_json_string(out, code);
  }
  out += "}}";
  return out;
}

std::string openai_error_body(const Error& error) {
  std::string_view type = error.http_status() >= 500 ? "server_error" : "invalid_request_error";
  return openai_error_body(error.message(), type, error.param(), error.code());
}

std::string injected_status_body(int status) {
  std::string_view type = "invalid_request_error";
  std::string_view code;
  if (status == 429) {
    type = "rate_limit_exceeded";
    code = "rate_limit_exceeded";
  } else if (status >= 500) {
    type = "server_error";
  }
  return openai_error_body("mock injected status " + std::to_string(status), type, {}, code);
}

}  // namespace sluice::mock
