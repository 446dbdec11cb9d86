#pragma once

#include <string>
#include <string_view>

#include "core/error.h"

namespace sluice::protocol::anthropic {

// Errors in the Anthropic shape:
//   {"type":"error","error":{"type":"<error type>","message":"..."}}
// Error types per HTTP status, from https://docs.claude.com/en/api/errors:
//   400 invalid_request_error (also "other 4XX status codes not listed"), 401
//   authentication_error, 402 billing_error, 403 permission_error, 404 not_found_error, 409
//   conflict_error, 413 request_too_large, 429 rate_limit_error, 500 api_error, 504
//   timeout_error, 529 overloaded_error.

// The error type Anthropic uses for an HTTP status. Statuses the table does not list: other
// 4xx -> invalid_request_error, 503 -> overloaded_error (temporarily unable to serve), other
// 5xx and anything else -> api_error.
std::string_view error_type_for_status(int status);

// The error type for a Sluice error. If error.code() already is an Anthropic error type (the
// stream decoder keeps the upstream's type there) it is used as is; an upstream status error
// takes the type of its status; otherwise by kind: kBadRequest / kMethodNotAllowed /
// kHeadersTooLarge / kRequestTimeout -> invalid_request_error, kUnauthorized ->
// authentication_error, kForbidden -> permission_error, kNotFound -> not_found_error,
// kPayloadTooLarge -> request_too_large, kRateLimited -> rate_limit_error, kUnavailable ->
// overloaded_error, kUpstreamTimeout -> timeout_error, kUpstreamUnreachable /
// kUpstreamProtocol / kClientGone / kInternal -> api_error.
std::string_view error_type(const Error& error);

// Whether `type` is one of the Anthropic error types listed above.
bool is_error_type(std::string_view type);

// The HTTP status to answer with: error.http_status() (the type only is chosen here), or 500
// when that is not an error status.
int error_status(const Error& error);

// The response body for `error`: {"type":"error","error":{"type":..,"message":..}}.
std::string encode_error(const Error& error);
// The same body from a type and a message the caller already has.
std::string encode_error(std::string_view type, std::string_view message);
// Appends the same JSON object to `out` (used by the stream encoder's `event: error`).
void append_error_json(std::string& out, std::string_view type, std::string_view message);

// An Error for an error an Anthropic upstream reported (`type` and `message` from its error
// object): kind kUpstreamStatus, the status of the type (529 for overloaded_error, 500 for an
// unknown type), code() = the type so that re-encoding keeps it.
Error error_from_wire(std::string_view type, std::string message);

}  // namespace sluice::protocol::anthropic
