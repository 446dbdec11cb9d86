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

}  // namespace sluice::protocol::openai_chat
