#include "mock_request.h"

namespace sluice::mock {
namespace {

char lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

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

}  // namespace sluice::mock
