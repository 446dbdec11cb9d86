#include "mock_request.h"

#include <algorithm>

namespace sluice::mock {
namespace {

char lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

int hex_value(char c) {
  if (c >= '0' && c <= '9') {
    return c - '0';
  }
  c = lower(c);
  return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

// Percent-decodes one query component; '+' is a space, a malformed escape is kept as is.
std::string decode_component(std::string_view in) {
  std::string out;
  out.reserve(in.size());
  for (std::size_t i = 0; i < in.size(); ++i) {
    if (in[i] == '+') {
      out.push_back(' ');
    } else if (in[i] == '%' && i + 2 < in.size() && hex_value(in[i + 1]) >= 0 &&
               hex_value(in[i + 2]) >= 0) {
      out.push_back(static_cast<char>(hex_value(in[i + 1]) * 16 + hex_value(in[i + 2])));
      i += 2;
    } else {
      out.push_back(in[i]);
    }
  }
  return out;
}

}  // namespace

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) {
    return false;
  }
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (lower(a[i]) != lower(b[i])) {
      return false;
    }
  }
  return true;
}

void assign_lower(std::string& out, std::string_view in) {
  out.assign(in);
  for (char& c : out) {
    c = lower(c);
  }
}

std::optional<std::string_view> find_header(const HeaderList& headers, std::string_view name) {
  for (const auto& [n, v] : headers) {
    if (iequals(n, name)) {
      return v;
    }
  }
  return std::nullopt;
}

std::string_view path_of(std::string_view target) {
  return target.substr(0, target.find_first_of("?#"));
}

std::vector<std::pair<std::string, std::string>> query_params(std::string_view target) {
  std::vector<std::pair<std::string, std::string>> out;
  std::size_t q = target.find('?');
  if (q == std::string_view::npos) {
    return out;
  }
  std::string_view query = target.substr(q + 1);
  query = query.substr(0, query.find('#'));
  while (!query.empty()) {
    std::string_view item = query.substr(0, query.find('&'));
    query.remove_prefix(std::min(query.size(), item.size() + 1));
    if (item.empty()) {
      continue;
    }
    std::size_t eq = item.find('=');
    out.emplace_back(
        decode_component(item.substr(0, eq)),
        eq == std::string_view::npos ? std::string() : decode_component(item.substr(eq + 1)));
  }
  return out;
}

std::optional<std::string> query_param(std::string_view target, std::string_view name) {
  for (auto& [n, v] : query_params(target)) {
    if (n == name) {
      return std::move(v);
    }
  }
  return std::nullopt;
}

}  // namespace sluice::mock
