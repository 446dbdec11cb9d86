#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace sluice::mock {

// An HTTP/1.1 response head as the mock writes it.
struct ResponseHead {
  int status = 200;
  std::string_view content_type;
  // Written as x-mock-request-number.
  std::uint64_t request_number = 0;
  bool keep_alive = true;
  // true: Transfer-Encoding: chunked; false: Content-Length: content_length (omitted for a
  // 204 whose content_length is 0).
  bool chunked = false;
  std::size_t content_length = 0;
  // Pre-formatted "Name: value\r\n" lines, written verbatim.
  std::string_view extra_headers;
};

// Appends the status line, headers and the blank line that ends the head.
void append_response_head(std::string& out, const ResponseHead& head);

// An interim (1xx) response head: the status line and, for 103 Early Hints, a Link field,
// then the blank line.
void append_interim_head(std::string& out, int status);

// "OK", "Too Many Requests", ...; "Unknown" for statuses without a standard phrase.
std::string_view reason_phrase(int status);

// Appends one chunk of the chunked transfer coding (RFC 9112 section 7.1): hex size, CRLF,
// data, CRLF. Empty `data` is skipped (a zero-size chunk would end the body).
void append_chunk(std::string& out, std::string_view data);

// The last-chunk and empty trailer section that end a chunked body.
inline constexpr std::string_view kLastChunk = "0\r\n\r\n";

}  // namespace sluice::mock
