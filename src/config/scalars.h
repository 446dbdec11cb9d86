#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "config/config.h"
#include "core/result.h"

// Parsers for the scalar formats used in config files. Each takes the scalar text after
// ${VAR} interpolation and returns the value or an Error whose message has no location
// (the loader adds "<file>:<line>:<col>: <field>: "). All pure and thread-safe.
namespace sluice::config {

// Decimal digits only ("0", "4096"); no sign, no spaces, no hex. Errors on overflow.
Result<std::uint64_t> parse_unsigned(std::string_view text);

// A byte count: a plain integer ("1048576") or an integer with a binary unit, optionally
// separated by one space: "512B", "64KiB", "8MiB", "1GiB" (1 KiB = 1024 bytes). Decimal
// units (KB, MB, GB) are rejected on purpose, to avoid 1000-vs-1024 confusion.
Result<std::uint64_t> parse_size(std::string_view text);

// "true" / "false" in any letter case. YAML 1.1's yes/no/on/off are rejected.
Result<bool> parse_bool(std::string_view text);

// "host:port". The host is an IPv4 address, a host name, or an IPv6 address in brackets
// ("[::1]:8080", stored without the brackets). The port is 0..65535; 0 = any free port.
Result<ListenAddress> parse_listen_address(std::string_view text);

// An upstream base URL: http or https, a host, an optional port and path prefix; no
// credentials, query or fragment. Returns the URL with trailing slashes removed. Messages
// do not repeat the URL.
Result<std::string> normalize_base_url(std::string_view text);

// RFC 9110 token (header field name).
bool is_header_name(std::string_view name);

// True when every byte is visible ASCII (0x21..0x7e): no spaces, no control characters.
bool is_visible_ascii(std::string_view text);

// SHA-256 of `data`, 64 lower-case hex digits.
std::string sha256_hex(std::string_view data);

// True for exactly 64 hex digits (either case).
bool is_sha256_hex(std::string_view text);

}  // namespace sluice::config
