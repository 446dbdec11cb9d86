#include "providers/base_url.h"

#include <boost/url/parse.hpp>

namespace sluice::providers {

Result<BaseUrl> parse_base_url(std::string_view text) {
  auto parsed = boost::urls::parse_absolute_uri(text);
  if (!parsed) {
    return Error(ErrorKind::kBadRequest, "invalid URL: " + parsed.error().message());
  }
  const auto& u = *parsed;
  BaseUrl out;
  if (u.scheme() == "https") {
    out.tls = true;
    out.port = 443;
  } else if (u.scheme() == "http") {
    out.port = 80;
  } else {
    return Error(ErrorKind::kBadRequest, "URL scheme must be http or https");
  }
  if (u.has_userinfo() || u.has_query() || u.has_fragment()) {
    return Error(ErrorKind::kBadRequest, "URL must not contain credentials, query or fragment");
  }
  out.host = std::string(u.host_address());
  if (out.host.empty()) {
    return Error(ErrorKind::kBadRequest, "URL has no host");
  }
  const bool default_port = !u.has_port();
  if (u.has_port()) {
    unsigned long p = u.port_number();
    if (p == 0 || p > 65535) {
      return Error(ErrorKind::kBadRequest, "URL port out of range");
    }
    out.port = static_cast<std::uint16_t>(p);
  }
  out.path_prefix = std::string(u.encoded_path());
  while (!out.path_prefix.empty() && out.path_prefix.back() == '/') {
    out.path_prefix.pop_back();
  }
  std::string host_for_header = std::string(u.encoded_host_and_port());
  out.host_header = default_port ? std::string(u.encoded_host()) : host_for_header;
  return out;
}

void append_path_segment(std::string& out, std::string_view segment, std::string_view also_plain) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  for (const char c : segment) {
    const bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                       c == '-' || c == '_' || c == '.' ||
                       also_plain.find(c) != std::string_view::npos;
    if (plain) {
      out.push_back(c);
    } else {
      const auto b = static_cast<unsigned char>(c);
      out.push_back('%');
      out.push_back(kHex[b >> 4]);
      out.push_back(kHex[b & 0xF]);
    }
  }
}

}  // namespace sluice::providers
