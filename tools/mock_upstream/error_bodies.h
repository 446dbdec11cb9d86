#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/error.h"

namespace sluice::mock {

// Whose error shape an endpoint answers with.
enum class Dialect : std::uint8_t {
  kOpenAI,     // {"error":{"message","type","param","code"}} (openai_errors.h)
  kAnthropic,  // {"type":"error","error":{"type","message"}}
  kGemini,     // {"error":{"code","message","status"}}
  kBedrock,    // {"message"} plus an x-amzn-errortype header naming the exception
};

// Anthropic's error type for an HTTP status: 400 invalid_request_error,
// 401 authentication_error, 403 permission_error, 404 not_found_error, 413
// request_too_large, 429 rate_limit_error, 500 api_error, 529 overloaded_error; other 4xx
// invalid_request_error, other 5xx api_error.
std::string_view anthropic_error_type(int status);

// {"type":"error","error":{"type":<type>,"message":<message>}}
std::string anthropic_error_body(std::string_view type, std::string_view message);

// Google's canonical status name for an HTTP status: 400 INVALID_ARGUMENT, 401
// UNAUTHENTICATED, 403 PERMISSION_DENIED, 404 NOT_FOUND, 409 ABORTED, 429
// RESOURCE_EXHAUSTED, 499 CANCELLED, 500 INTERNAL, 501 UNIMPLEMENTED, 503 UNAVAILABLE, 504
// DEADLINE_EXCEEDED; other 4xx FAILED_PRECONDITION, other 5xx INTERNAL.
std::string_view gemini_error_status(int status);

// {"error":{"code":<status>,"message":<message>,"status":<name>}}, pretty-printed as Google
// sends it.
std::string gemini_error_body(int status, std::string_view message);

// Bedrock's exception name for an HTTP status: 400 ValidationException, 403
// AccessDeniedException, 404 ResourceNotFoundException, 408 ModelTimeoutException, 424
// ModelErrorException, 429 ThrottlingException, 500 InternalServerException, 503
// ServiceUnavailableException; other 4xx ValidationException, other 5xx
// InternalServerException.
std::string_view bedrock_error_type(int status);

// {"message":<message>}
std::string bedrock_error_body(std::string_view message);

// The value of Bedrock's x-amzn-errortype header for an exception of the Bedrock service
// model: "<type>:http://internal.amazon.com/coral/com.amazon.bedrock/".
std::string bedrock_error_type_value(std::string_view type);

// The body for an Error raised by the mock itself (validation, unknown path, bad fault
// header), in `dialect`'s shape.
std::string error_body(Dialect dialect, const Error& error);

// The body for x-mock-status S in `dialect`'s shape; the message is "mock injected status S".
std::string injected_status_body(Dialect dialect, int status);

// The head fields ("Name: value\r\n" lines) that go with error_body(dialect, error): for
// Bedrock, x-amzn-errortype with error.code() as it is when set (the authentication
// exceptions, which AWS names without a namespace), otherwise bedrock_error_type_value of
// the status; nothing for the other dialects.
std::string error_head_fields(Dialect dialect, const Error& error);

// The head fields that go with injected_status_body(dialect, status).
std::string injected_status_head_fields(Dialect dialect, int status);

}  // namespace sluice::mock
