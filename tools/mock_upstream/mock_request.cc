#include "mock_request.h"

namespace sluice::mock {
namespace {

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) {
    return false;
  }
  for (std::size_t i = 0; i < a.size(); ++i) {
    char x = a[i];
    char y = b[i];
    if (x >= 'A' && x <= 'Z') {
      x = static_cast<char>(x - 'A' + 'a');
    }
    if (y >= 'A' && y <= 'Z') {
      y = static_cast<char>(y - 'A' + 'a');
    }
    if (x != y) {
      return false;
    }
  }
  return true;
}

}  // namespace

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
