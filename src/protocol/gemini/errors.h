#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/error.h"

// Errors in the Gemini API's shape (google.rpc.Status as JSON):
//   {"error":{"code":400,"message":"...","status":"INVALID_ARGUMENT"}}
// Status names per HTTP status, from the Gemini API troubleshooting guide and the google.rpc
// code mapping it follows: 400 INVALID_ARGUMENT (also FAILED_PRECONDITION in the API), 401
// UNAUTHENTICATED, 403 PERMISSION_DENIED, 404 NOT_FOUND, 409 ABORTED, 429 RESOURCE_EXHAUSTED,
// 499 CANCELLED, 500 INTERNAL, 501 UNIMPLEMENTED, 503 UNAVAILABLE, 504 DEADLINE_EXCEEDED.
namespace sluice::protocol::gemini {

// The status name for an HTTP status: the table above; 529 (an overloaded upstream, Anthropic's
// status) -> UNAVAILABLE; other 4xx -> FAILED_PRECONDITION, other 5xx (and anything else) ->
// INTERNAL.
std::string_view status_for_http(int status);

// Whether `name` is one of the google.rpc status names.
bool is_status_name(std::string_view name);

// The HTTP status to answer with: error.http_status(), or 500 when that is not an error status.
int error_status(const Error& error);

// The status name for a Sluice error: error.code() when it already is a status name (an
// upstream Gemini error keeps its own there), otherwise the name for error_status(error).
std::string_view error_status_name(const Error& error);

// Appends {"error":{"code":<status>,"message":..,"status":..}}.
void append_error_json(std::string& out, int status, std::string_view message,
                       std::string_view status_name);
// The response body for `error`.
std::string encode_error(const Error& error);

// An Error for an error a Gemini upstream reported (its google.rpc.Status): kind
// kUpstreamStatus with `code` as the HTTP status (500 when it is not an error status), code()
// = the status name, so re-encoding keeps it.
Error error_from_wire(int code, std::string message, std::string_view status_name);

// Seconds from the google.rpc.RetryInfo detail of an error body ("retryDelay": "37s" or
// "1.5s", rounded up), 0 when there is none. Gemini API and Vertex AI answers alike.
std::uint32_t retry_delay_seconds(std::string_view body);

// `error` (an upstream's 429 or 503 with the error body `body`) waiting what its RetryInfo says
// when no Retry-After header set a wait already; any other error unchanged.
Error with_retry_info(Error error, int status, std::string_view body);

}  // namespace sluice::protocol::gemini
