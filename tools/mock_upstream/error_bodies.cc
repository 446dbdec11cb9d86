#include "error_bodies.h"

#include "json_text.h"
#include "openai_errors.h"

namespace sluice::mock {
namespace {

struct StatusName {
  int status;
  std::string_view name;
};

// The name `table` gives `status`, or else `client` for a 4xx and `server` for a 5xx.
template <std::size_t N>
std::string_view name_of(const StatusName (&table)[N], int status, std::string_view client,
                         std::string_view server) {
  for (const auto& entry : table) {
    if (entry.status == status) {
      return entry.name;
    }
  }
  return status >= 500 ? server : client;
}

}  // namespace

std::string_view anthropic_error_type(int status) {
  static constexpr StatusName kTypes[] = {
      {401, "authentication_error"}, {403, "permission_error"}, {404, "not_found_error"},
      {413, "request_too_large"},    {429, "rate_limit_error"}, {529, "overloaded_error"},
  };
  return name_of(kTypes, status, "invalid_request_error", "api_error");
}

std::string anthropic_error_body(std::string_view type, std::string_view message) {
  std::string out = R"({"type":"error","error":{"type":)";
  append_json_string(out, type);
  out += R"(,"message":)";
  append_json_string(out, message);
  out += "}}";
  return out;
}

std::string_view gemini_error_status(int status) {
  static constexpr StatusName kStatuses[] = {
      {400, "INVALID_ARGUMENT"},  {401, "UNAUTHENTICATED"}, {403, "PERMISSION_DENIED"},
      {404, "NOT_FOUND"},         {409, "ABORTED"},         {429, "RESOURCE_EXHAUSTED"},
      {499, "CANCELLED"},         {501, "UNIMPLEMENTED"},   {503, "UNAVAILABLE"},
      {504, "DEADLINE_EXCEEDED"},
  };
  return name_of(kStatuses, status, "FAILED_PRECONDITION", "INTERNAL");
}

std::string gemini_error_body(int status, std::string_view message) {
  std::string compact = R"({"error":{"code":)";
  compact += std::to_string(status);
  compact += R"(,"message":)";
  append_json_string(compact, message);
  compact += R"(,"status":)";
  append_json_string(compact, gemini_error_status(status));
  compact += "}}";
  std::string out;
  append_google_json(out, compact, GoogleJsonStyle::kPretty);
  return out;
}

std::string_view bedrock_error_type(int status) {
  static constexpr StatusName kTypes[] = {
      {400, "ValidationException"},         {403, "AccessDeniedException"},
      {404, "ResourceNotFoundException"},   {408, "ModelTimeoutException"},
      {424, "ModelErrorException"},         {429, "ThrottlingException"},
      {503, "ServiceUnavailableException"},
  };
  return name_of(kTypes, status, "ValidationException", "InternalServerException");
}

std::string bedrock_error_body(std::string_view message) {
  std::string out = R"({"message":)";
  append_json_string(out, message);
  out += "}";
  return out;
}

std::string bedrock_error_type_value(std::string_view type) {
  std::string out(type);
  out += ":http://internal.amazon.com/coral/com.amazon.bedrock/";
  return out;
}

std::string error_body(Dialect dialect, const Error& error) {
  switch (dialect) {
    case Dialect::kBedrock:
      return bedrock_error_body(error.message());
    case Dialect::kAnthropic:
      return anthropic_error_body(anthropic_error_type(error.http_status()), error.message());
    case Dialect::kGemini:
      return gemini_error_body(error.http_status(), error.message());
    case Dialect::kOpenAI:
      break;
  }
  return openai_error_body(error);
}

std::string injected_status_body(Dialect dialect, int status) {
  if (dialect == Dialect::kOpenAI) {
    return injected_status_body(status);
  }
  return error_body(dialect, Error(ErrorKind::kUpstreamStatus, status,
                                   "mock injected status " + std::to_string(status)));
}

std::string error_head_fields(Dialect dialect, const Error& error) {
  if (dialect != Dialect::kBedrock) {
    return {};
  }
  std::string out = "x-amzn-errortype: ";
  out += error.code().empty() ? bedrock_error_type_value(bedrock_error_type(error.http_status()))
                              : error.code();
  out += "\r\n";
  return out;
}

std::string injected_status_head_fields(Dialect dialect, int status) {
  return error_head_fields(dialect, Error(ErrorKind::kUpstreamStatus, status, {}));
}

}  // namespace sluice::mock
