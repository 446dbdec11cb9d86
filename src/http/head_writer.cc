#include "http/head_writer.h"

#include <charconv>

#include <boost/beast/http/status.hpp>

namespace sluice::http {
namespace bhttp = boost::beast::http;

namespace {

// A plain loop: string_view::find_first_of calls memchr once per character of `v`.
bool has_line_break(std::string_view v) {
  for (const char c : v) {
    if (c == '\r' || c == '\n') {
      return true;
    }
  }
  return false;
}

}  // namespace

HeadWriter& HeadWriter::status_line(unsigned version, unsigned status) {
  out_.append(version == 10 ? "HTTP/1.0 " : "HTTP/1.1 ");
  char code[4];
  code[0] = static_cast<char>('0' + status / 100 % 10);
  code[1] = static_cast<char>('0' + status / 10 % 10);
  code[2] = static_cast<char>('0' + status % 10);
  code[3] = ' ';
  out_.append(code, sizeof code);
  const auto reason = bhttp::obsolete_reason(static_cast<bhttp::status>(status));
  out_.append(reason.data(), reason.size());
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
  if (has_line_break(name) || has_line_break(value)) {
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

HeadWriter& HeadWriter::fields(const bhttp::fields& fields) {
  for (const auto& f : fields) {
    field(std::string_view(f.name_string().data(), f.name_string().size()),
          std::string_view(f.value().data(), f.value().size()));
  }
  return *this;
}

std::size_t format_chunk_size(char* buf, std::size_t size) {
  auto r = std::to_chars(buf, buf + 16, size, 16);
  r.ptr[0] = '\r';
  r.ptr[1] = '\n';
  return static_cast<std::size_t>(r.ptr + 2 - buf);
}

}  // namespace sluice::http
