#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/result.h"

namespace sluice::providers {

// An upstream base URL split into what a connection and a request target need.
struct BaseUrl {
  bool tls = false;
  std::string host;         // without brackets for IPv6
  std::uint16_t port = 0;   // explicit or the scheme's default
  std::string path_prefix;  // e.g. "/v1"; no trailing slash; may be empty
  // Value for the Host header ("host" or "host:port" when the port is not the default).
  std::string host_header;
};

// Parses http(s)://host[:port][/prefix]. Rejects other schemes, userinfo, query, fragment.
Result<BaseUrl> parse_base_url(std::string_view url);

// Appends `segment` as one URL path segment (a deployment or model name from a route): letters,
// digits, '-', '_' and '.' as they are, every other byte percent-encoded, so the request line
// stays well-formed whatever the route says. `also_plain`: more bytes kept as they are (each
// must be an RFC 3986 pchar: Vertex AI's "claude-sonnet-4-5@20250929" keeps its '@').
void append_path_segment(std::string& out, std::string_view segment,
                         std::string_view also_plain = {});

}  // namespace sluice::providers
