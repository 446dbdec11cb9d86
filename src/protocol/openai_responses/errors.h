#pragma once

#include <string>
#include <string_view>

#include <boost/json/object.hpp>

#include "core/error.h"

// Errors in OpenAI Responses shapes, both ways (openapi.yaml ResponseError, the error body).
namespace sluice::protocol::openai_responses {

// An upstream error object ({message, type, code, param}) as a kUpstreamStatus Error; the
// status comes from the type or code (invalid_request_error 400, authentication_error 401,
// permission_error 403, not_found 404, rate limits and insufficient_quota 429, server_error
// 500, else 502). A string code becomes Error::code().
Error error_from_wire(const boost::json::object& error);

// OpenAI's error body {"error":{"message","type","param","code"}} for `error`, and its status.
std::string encode_error(const Error& error);
int error_status(const Error& error);
// OpenAI's `type` for an error kind (invalid_request_error, rate_limit_error, ...).
std::string_view error_type(const Error& error);
// Whether `body` is {"error":{"message":"...",...}}.
bool is_error_body(std::string_view body);

}  // namespace sluice::protocol::openai_responses
