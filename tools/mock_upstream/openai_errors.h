#pragma once

#include <string>
#include <string_view>

#include "core/error.h"

namespace sluice::mock {

// OpenAI's error object:
//   {"error":{"message":..,"type":..,"param":<string|null>,"code":<string|null>}}
// An empty `param` or `code` is written as null.
std::string openai_error_body(std::string_view message, std::string_view type,
                              std::string_view param, std::string_view code);

// The body for an Error raised by the mock itself (validation, unknown path, bad fault
// header): type "invalid_request_error" for 4xx, "server_error" for 5xx.
std::string openai_error_body(const Error& error);

// The body for x-mock-status: message "mock injected status N", type "rate_limit_exceeded"
// for 429, "server_error" for 5xx, "invalid_request_error" for other statuses; code
// "rate_limit_exceeded" for 429, null otherwise.
std::string injected_status_body(int status);

}  // namespace sluice::mock
