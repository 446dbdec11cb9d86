#include "protocol/gemini/errors.h"

#include <array>
#include <charconv>
#include <cmath>

#include <boost/json/value.hpp>

#include "codec/json_read.h"
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

std::uint32_t retry_delay_seconds(std::string_view body) {
  boost::system::error_code ec;
  boost::json::value doc = codec::parse_json(body, ec, {}, 32);
  const boost::json::value* error =
      !ec && doc.is_object() ? doc.get_object().if_contains("error") : nullptr;
  const boost::json::value* details =
      error != nullptr && error->is_object() ? error->get_object().if_contains("details") : nullptr;
  if (details == nullptr || !details->is_array()) {
    return 0;
  }
  for (const boost::json::value& d : details->get_array()) {
    const boost::json::value* type = d.is_object() ? d.get_object().if_contains("@type") : nullptr;
    const boost::json::value* delay =
        d.is_object() ? d.get_object().if_contains("retryDelay") : nullptr;
    if (type == nullptr || !type->is_string() ||
        !std::string_view(type->get_string()).ends_with("google.rpc.RetryInfo") ||
        delay == nullptr || !delay->is_string()) {
      continue;
    }
    std::string_view text(delay->get_string());
    if (!text.ends_with('s')) {
      return 0;
    }
    text.remove_suffix(1);
    double seconds = 0;
    auto [ptr, err] = std::from_chars(text.data(), text.data() + text.size(), seconds);
    if (err != std::errc() || ptr != text.data() + text.size() || !(seconds > 0)) {
      return 0;
    }
    return static_cast<std::uint32_t>(std::min(86400.0, std::ceil(seconds)));
  }
  return 0;
}

Error with_retry_info(Error error, int status, std::string_view body) {
  if (error.retry_after_seconds() == 0 && (status == 429 || status == 503)) {
    if (const std::uint32_t wait = retry_delay_seconds(body); wait > 0) {
      return std::move(error).with_retry_after(wait);
    }
  }
  return error;
}

}  // namespace sluice::protocol::gemini
