#include "codec/http_head.h"

#include <charconv>

namespace sluice::codec {

namespace {

// A plain loop: string_view::find_first_of calls memchr once per character of the set.
bool unsafe_in_head(std::string_view v) {
  for (const char c : v) {
    if (c == '\r' || c == '\n' || c == '\0') {
      return true;
    }
  }
  return false;
}

}  // namespace

std::string_view reason_phrase(unsigned status) {
  // RFC 9110 section 15, plus 429 (RFC 6585) and the 1xx codes in use.
  switch (status) {
    case 100:
      return "Continue";
    case 101:
      return "Switching Protocols";
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
    case 300:
      return "Multiple Choices";
    case 301:
      return "Moved Permanently";
    case 302:
      return "Found";
    case 303:
      return "See Other";
    case 304:
      return "Not Modified";
    case 307:
      return "Temporary Redirect";
    case 308:
      return "Permanent Redirect";
    case 400:
      return "Bad Request";
    case 401:
      return "Unauthorized";
    case 402:
      return "Payment Required";
    case 403:
      return "Forbidden";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 406:
      return "Not Acceptable";
    case 408:
      return "Request Timeout";
    case 409:
      return "Conflict";
    case 410:
      return "Gone";
    case 411:
      return "Length Required";
    case 412:
      return "Precondition Failed";
    case 413:
      return "Content Too Large";
    case 414:
      return "URI Too Long";
    case 415:
      return "Unsupported Media Type";
    case 417:
      return "Expectation Failed";
    case 422:
      return "Unprocessable Content";
    case 425:
      return "Too Early";
    case 426:
      return "Upgrade Required";
    case 428:
      return "Precondition Required";
    case 429:
      return "Too Many Requests";
    case 431:
      return "Request Header Fields Too Large";
    case 499:
      return "Client Closed Request";
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
    case 505:
      return "HTTP Version Not Supported";
    case 529:
      return "Site Overloaded";
    default:
      return "";
  }
}

HeadWriter& HeadWriter::status_line(unsigned version, unsigned status) {
  out_.append(version == 10 ? "HTTP/1.0 " : "HTTP/1.1 ");
  char code[4];
  code[0] = static_cast<char>('0' + status / 100 % 10);
  code[1] = static_cast<char>('0' + status / 10 % 10);
  code[2] = static_cast<char>('0' + status % 10);
  code[3] = ' ';
  out_.append(code, sizeof code);
  out_.append(reason_phrase(status));
  out_.append("\r\n");
  return *this;
}

HeadWriter& HeadWriter::request_line(std::string_view method, std::string_view target,
                                     std::string_view target_suffix) {
  out_.append(method);
  out_.push_back(' ');
  out_.append(target);
  out_.append(target_suffix);
  out_.append(" HTTP/1.1\r\n");
  return *this;
}

HeadWriter& HeadWriter::field(std::string_view name, std::string_view value) {
  if (name.empty() || unsafe_in_head(name) || unsafe_in_head(value)) {
    return *this;
  }
  out_.append(name);
  out_.append(": ");
  out_.append(value);
  out_.append("\r\n");
  return *this;
}

HeadWriter& HeadWriter::field(std::string_view name, std::uint64_t value) {
  char buf[24];
  auto r = std::to_chars(buf, buf + sizeof buf, value);
  return field(name, std::string_view(buf, static_cast<std::size_t>(r.ptr - buf)));
}

std::size_t format_chunk_size(char* buf, std::size_t size) {
  auto r = std::to_chars(buf, buf + 16, size, 16);
  r.ptr[0] = '\r';
  r.ptr[1] = '\n';
  return static_cast<std::size_t>(r.ptr + 2 - buf);
}

}  // namespace sluice::codec
