#include "config/scalars.h"

#include <array>
#include <charconv>
#include <limits>

#include <arpa/inet.h>
#include <boost/url/parse.hpp>
#include <openssl/evp.h>

#include "config/loader.h"  // in_quotes, to_lower

namespace sluice::config {

namespace {

Error invalid(std::string message) { return Error(ErrorKind::kBadRequest, std::move(message)); }

bool is_digits(std::string_view text) {
  if (text.empty()) {
    return false;
  }
  for (char c : text) {
    if (c < '0' || c > '9') {
      return false;
    }
  }
  return true;
}

bool is_host_name(std::string_view host) {
  if (host.empty() || host.size() > 253) {
    return false;
  }
  std::size_t label = 0;
  for (char c : host) {
    if (c == '.') {
      if (label == 0) {
        return false;
      }
      label = 0;
      continue;
    }
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '-' || c == '_';
    if (!ok || ++label > 63) {
      return false;
    }
  }
  return true;
}

}  // namespace

Result<std::uint64_t> parse_unsigned(std::string_view text) {
  if (!text.empty() && text.front() == '-' && is_digits(text.substr(1))) {
    return invalid("must not be negative (got " + std::string(text) + ")");
  }
  if (!is_digits(text)) {
    return invalid("expected a non-negative integer, got " + in_quotes(text));
  }
  std::uint64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) {
    return invalid("number too large: " + std::string(text));
  }
  return value;
}

Result<std::uint64_t> parse_size(std::string_view text) {
  std::size_t digits = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') {
    ++digits;
  }
  const std::string_view number = text.substr(0, digits);
  std::string_view unit = text.substr(digits);
  if (number.empty()) {
    if (!text.empty() && text.front() == '-') {
      return invalid("must not be negative (got " + std::string(text) + ")");
    }
    return invalid("expected a size such as 1048576, 64KiB or 8MiB, got " + in_quotes(text));
  }
  if (!unit.empty() && unit.front() == ' ') {
    unit.remove_prefix(1);
  }
  std::uint64_t multiplier = 1;
  if (unit.empty() && digits == text.size()) {
    multiplier = 1;
  } else if (unit == "B") {
    multiplier = 1;
  } else if (unit == "KiB") {
    multiplier = 1ULL << 10;
  } else if (unit == "MiB") {
    multiplier = 1ULL << 20;
  } else if (unit == "GiB") {
    multiplier = 1ULL << 30;
  } else {
    return invalid("unknown size unit " + in_quotes(unit) +
                   " (use B, KiB, MiB or GiB; 1 KiB = 1024 bytes)");
  }
  auto value = parse_unsigned(number);
  if (!value) {
    return value.error();
  }
  if (*value > std::numeric_limits<std::uint64_t>::max() / multiplier) {
    return invalid("size too large: " + std::string(text));
  }
  return *value * multiplier;
}

Result<bool> parse_bool(std::string_view text) {
  const std::string lower = to_lower(text);
  if (lower == "true") {
    return true;
  }
  if (lower == "false") {
    return false;
  }
  return invalid("expected true or false, got " + in_quotes(text));
}

Result<ListenAddress> parse_listen_address(std::string_view text) {
  static constexpr std::string_view kExpected =
      "expected host:port, e.g. 127.0.0.1:8080, 0.0.0.0:8080 or [::1]:8080";
  ListenAddress out;
  std::string_view host;
  std::string_view port;
  if (!text.empty() && text.front() == '[') {
    const std::size_t close = text.find(']');
    if (close == std::string_view::npos) {
      return invalid("missing ']' after the IPv6 address; " + std::string(kExpected));
    }
    host = text.substr(1, close - 1);
    const std::string_view rest = text.substr(close + 1);
    if (rest.empty() || rest.front() != ':') {
      return invalid("missing :port after ']'; " + std::string(kExpected));
    }
    port = rest.substr(1);
    std::array<unsigned char, 16> buf{};
    if (std::string h(host); inet_pton(AF_INET6, h.c_str(), buf.data()) != 1) {
      return invalid("invalid IPv6 address " + in_quotes(host));
    }
  } else {
    const std::size_t colon = text.rfind(':');
    if (colon == std::string_view::npos) {
      return invalid(std::string(kExpected) + ", got " + in_quotes(text));
    }
    host = text.substr(0, colon);
    port = text.substr(colon + 1);
    if (host.find(':') != std::string_view::npos) {
      return invalid("IPv6 addresses must be written in brackets, e.g. [::1]:8080");
    }
    if (host.empty()) {
      return invalid("missing host; use 0.0.0.0:" + std::string(port) +
                     " for all interfaces or 127.0.0.1:" + std::string(port) + " for local only");
    }
    const bool dotted_digits = host.find_first_not_of("0123456789.") == std::string_view::npos;
    std::array<unsigned char, 4> buf{};
    if (dotted_digits) {
      if (std::string h(host); inet_pton(AF_INET, h.c_str(), buf.data()) != 1) {
        return invalid("invalid IPv4 address " + in_quotes(host));
      }
    } else if (!is_host_name(host)) {
      return invalid("invalid host name " + in_quotes(host));
    }
  }
  if (!is_digits(port)) {
    return invalid("invalid port " + in_quotes(port) + " (expected 0..65535)");
  }
  auto number = parse_unsigned(port);
  if (!number || *number > 65535) {
    return invalid("invalid port " + in_quotes(port) + " (expected 0..65535)");
  }
  out.host = std::string(host);
  out.port = static_cast<std::uint16_t>(*number);
  return out;
}

Result<std::string> normalize_base_url(std::string_view text) {
  auto parsed = boost::urls::parse_uri(boost::urls::string_view(text.data(), text.size()));
  if (!parsed) {
    return invalid("not a valid absolute URL (expected e.g. https://api.openai.com/v1)");
  }
  const boost::urls::url_view& url = *parsed;
  const std::string scheme = to_lower(url.scheme());
  if (scheme != "http" && scheme != "https") {
    return invalid("scheme must be http or https");
  }
  if (!url.has_authority() || url.encoded_host().empty()) {
    return invalid("missing host (expected e.g. https://api.openai.com/v1)");
  }
  if (url.has_userinfo()) {
    return invalid("must not contain credentials; use api_key or headers instead");
  }
  if (url.has_port()) {
    const std::string_view port(url.port().data(), url.port().size());
    auto number = parse_unsigned(port);
    if (!number || *number == 0 || *number > 65535) {
      return invalid("invalid port (expected 1..65535)");
    }
  }
  if (url.has_query()) {
    return invalid("must not contain a query string ('?...')");
  }
  if (url.has_fragment()) {
    return invalid("must not contain a fragment ('#...')");
  }
  std::string out(url.buffer().data(), url.buffer().size());
  while (!out.empty() && out.back() == '/') {
    out.pop_back();
  }
  return out;
}

bool is_header_name(std::string_view name) {
  if (name.empty()) {
    return false;
  }
  static constexpr std::string_view kSpecials = "!#$%&'*+-.^_`|~";
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    kSpecials.find(c) != std::string_view::npos;
    if (!ok) {
      return false;
    }
  }
  return true;
}

bool is_visible_ascii(std::string_view text) {
  for (char c : text) {
    if (c < 0x21 || c > 0x7e) {
      return false;
    }
  }
  return true;
}

std::string sha256_hex(std::string_view data) {
  std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
  unsigned int length = 0;
  if (EVP_Digest(data.data(), data.size(), digest.data(), &length, EVP_sha256(), nullptr) != 1) {
    return {};
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(length * 2);
  for (unsigned int i = 0; i < length; ++i) {
    out.push_back(kHex[digest[i] >> 4]);
    out.push_back(kHex[digest[i] & 0x0f]);
  }
  return out;
}

bool is_sha256_hex(std::string_view text) {
  if (text.size() != 64) {
    return false;
  }
  for (char c : text) {
    if (!std::isxdigit(static_cast<unsigned char>(c))) {
      return false;
    }
  }
  return true;
}

}  // namespace sluice::config
