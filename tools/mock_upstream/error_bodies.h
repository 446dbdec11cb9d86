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

// The body for an Error raised by the mock itself (validation, unknown path, bad fault
// header), in `dialect`'s shape.
std::string error_body(Dialect dialect, const Error& error);

// The body for x-mock-status S in `dialect`'s shape; the message is "mock injected status S".
std::string injected_status_body(Dialect dialect, int status);

}  // namespace sluice::mock
