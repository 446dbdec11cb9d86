#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace sluice::mock {

// The message content of the unrequested response (x-mock-trailing-response).
inline constexpr std::string_view kSmuggledContent = "SMUGGLED-RESPONSE";

// Appends a complete HTTP/1.1 response that nobody asked for: 200, application/json,
// Content-Length framed, keep-alive, x-mock-request-number 0, and a chat.completion with id
// "chatcmpl-smuggled" whose message content is kSmuggledContent. Written right after a real
// reply, it plays a broken or malicious upstream that leaves bytes on a keep-alive
// connection, which a client pooling that connection would read as the next answer.
void append_trailing_response(std::string& out, std::int64_t created);

}  // namespace sluice::mock
