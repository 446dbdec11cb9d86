#pragma once

#include <string>

#include "core/error.h"

namespace sluice::protocol::openai_chat {

// Encodes an error as OpenAI's error object:
//   {"error":{"message":"...","type":"...","param":null|"...","code":null|"..."}}
// `type` follows OpenAI's vocabulary (invalid_request_error, authentication_error,
// permission_error, rate_limit_error, server_error, ...); the HTTP status is
// error.http_status().
std::string encode_error(const Error& error);

// Turns an upstream error body into OpenAI's shape. A body that already is an OpenAI error
// object is returned as is; anything else (vLLM's {"object":"error",...}, HTML from a
// proxy, empty) is wrapped with a message naming the provider and status.
std::string normalise_upstream_error(std::string_view body, int status,
                                     std::string_view provider_id);

// Whether `body` is an OpenAI error object ({"error":{"message":"...",...}}).
bool is_error_body(std::string_view body);

// The error answer for `error`: its HTTP status and OpenAI's error body.
std::string encode_error_with_status(const Error& error, int& status);

// An upstream error object ({"message","type","code","param"}, OpenAI's shape, which
// vLLM and most compatible servers copy) as a kUpstreamStatus Error. The status comes
// from a numeric `code` in 400..599 (vLLM) or from `type` (invalid_request_error 400,
// authentication_error 401, permission_error 403, not_found_error or code model_not_found 404,
// rate_limit_error and insufficient_quota 429, server_error 500, else 502); a string `code` becomes
// Error::code().
Error error_from_openai(std::string_view message, std::string_view type, std::string_view code,
                        int numeric_code, std::string_view param);

}  // namespace sluice::protocol::openai_chat
