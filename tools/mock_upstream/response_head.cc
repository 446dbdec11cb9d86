#include "response_head.h"

#include <charconv>

namespace sluice::mock {

std::string_view reason_phrase(int status) {
  switch (status) {
    case 100:
      return "Continue";
    case 102:
      return "Processing";
    case 103:
      return "Early Hints";
    case 200:
      return "OK";
    case 201:
      return "Created";
    case 202:
      return "Accepted";
    case 203:
      return "Non-Authoritative Information";
    case 204:
      return "No Content";
    case 205:
      return "Reset Content";
    case 206:
      return "Partial Content";
    case 207:
      return "Multi-Status";
    case 208:
      return "Already Reported";
    case 226:
      return "IM Used";
    case 301:
      return "Moved Permanently";
    case 302:
      return "Found";
    case 304:
      return "Not Modified";
    case 400:
      return "Bad Request";
    case 401:
      return "Unauthorized";
    case 403:
      return "Forbidden";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 408:
      return "Request Timeout";
    case 409:
      return "Conflict";
    case 413:
      return "Content Too Large";
    case 415:
      return "Unsupported Media Type";
    case 422:
      return "Unprocessable Content";
    case 429:
      return "Too Many Requests";
    case 431:
      return "Request Header Fields Too Large";
    case 500:
      return "Internal Server Error";
    case 501:
      return "Not Implemented";
    case 502:
      return "Bad Gateway";
    case 503:
      return "Service Unavailable";
    case 504:
      return "Gateway Timeout";
    case 529:
      return "Site Overloaded";
    default:
      return "Unknown";
  }
}

namespace {

void append_number(std::string& out, std::uint64_t n, int base = 10) {
  char buf[24];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, n, base);
  out.append(buf, end);
}

void append_status_line(std::string& out, int status) {
  out += "HTTP/1.1 ";
  append_number(out, static_cast<std::uint64_t>(status));
  out.push_back(' ');
  out += reason_phrase(status);
  out += "\r\n";
}

}  // namespace

void append_response_head(std::string& out, const ResponseHead& head) {
  append_status_line(out, head.status);
  out += "Server: sluice-mock-upstream\r\nContent-Type: ";
  out += head.content_type;
  if (head.chunked) {
    out += "\r\nTransfer-Encoding: chunked\r\nCache-Control: no-cache";
  } else if (head.status != 204 || head.content_length != 0) {
    // RFC 9110 section 8.6: no Content-Length in a 204. A 204 with a body (a raw body or
    // fixture the test asked for) keeps it, so that the broken framing reaches the peer.
    out += "\r\nContent-Length: ";
    append_number(out, head.content_length);
  }
  out += "\r\nx-mock-request-number: ";
  append_number(out, head.request_number);
  if (!head.keep_alive) {
    out += "\r\nConnection: close";
  }
  out += "\r\n";
  out += head.extra_headers;
  out += "\r\n";
}

void append_interim_head(std::string& out, int status) {
  append_status_line(out, status);
  if (status == 103) {
    out += "Link: </x>; rel=preload\r\n";
  }
  out += "\r\n";
}

void append_chunk(std::string& out, std::string_view data) {
  if (data.empty()) {
    return;
  }
  append_number(out, data.size(), 16);
  out += "\r\n";
  out += data;
  out += "\r\n";
}

}  // namespace sluice::mock
