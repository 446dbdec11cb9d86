#include "protocol/gemini/errors.h"

#include <array>

#include "codec/json_writer.h"

namespace sluice::protocol::gemini {

namespace {

struct StatusName {
  int status;
  std::string_view name;
};

constexpr std::array<StatusName, 11> kStatuses = {{
    {400, "INVALID_ARGUMENT"},
    {401, "UNAUTHENTICATED"},
    {403, "PERMISSION_DENIED"},
    {404, "NOT_FOUND"},
    {409, "ABORTED"},
    {429, "RESOURCE_EXHAUSTED"},
    {499, "CANCELLED"},
    {500, "INTERNAL"},
    {501, "UNIMPLEMENTED"},
    {503, "UNAVAILABLE"},
    {504, "DEADLINE_EXCEEDED"},
}};

// Names that share a status with one above (google.rpc codes).
constexpr std::array<std::string_view, 6> kOtherNames = {
    "FAILED_PRECONDITION", "OUT_OF_RANGE", "ALREADY_EXISTS", "UNKNOWN", "DATA_LOSS", "OK"};

}  // namespace

std::string_view status_for_http(int status) {
  for (const StatusName& s : kStatuses) {
    if (s.status == status) {
      return s.name;
    }
  }
  if (status == 529) {
    return "UNAVAILABLE";  // an overloaded upstream (Anthropic's 529): what Gemini says then
  }
  return status >= 400 && status < 500 ? "FAILED_PRECONDITION" : "INTERNAL";
}

bool is_status_name(std::string_view name) {
  for (const StatusName& s : kStatuses) {
    if (s.name == name) {
      return true;
    }
  }
  for (std::string_view n : kOtherNames) {
    if (n == name) {
      return n != "OK";
    }
  }
  return false;
}

int error_status(const Error& error) {
  const int status = error.http_status();
  return status >= 400 && status <= 599 ? status : 500;
}

std::string_view error_status_name(const Error& error) {
  if (is_status_name(error.code())) {
    return error.code();
  }
  return status_for_http(error_status(error));
}

void append_error_json(std::string& out, int status, std::string_view message,
                       std::string_view status_name) {
  codec::JsonWriter w(out);
  w.raw(R"({"error":{"code":)")
      .number(static_cast<std::int64_t>(status))
      .raw(R"(,"message":)")
      .string(message)
      .raw(R"(,"status":)")
      .string(status_name)
      .raw("}}");
}

std::string encode_error(const Error& error) {
  std::string out;
  out.reserve(64 + error.message().size());
  append_error_json(out, error_status(error), error.message(), error_status_name(error));
  return out;
}

Error error_from_wire(int code, std::string message, std::string_view status_name) {
  const int status = code >= 400 && code <= 599 ? code : 500;
  Error error(ErrorKind::kUpstreamStatus, status, std::move(message));
  if (is_status_name(status_name)) {
    error.with_code(std::string(status_name));
  }
  return error;
}

}  // namespace sluice::protocol::gemini
