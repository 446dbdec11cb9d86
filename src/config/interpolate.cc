#include "config/interpolate.h"

namespace sluice::config {

namespace {

Error syntax_error(std::string message) {
  return Error(ErrorKind::kBadRequest, std::move(message));
}

}  // namespace

bool is_env_name(std::string_view name) {
  if (name.empty()) {
    return false;
  }
  auto alpha = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; };
  if (!alpha(name.front())) {
    return false;
  }
  for (char c : name) {
    if (!alpha(c) && !(c >= '0' && c <= '9')) {
      return false;
    }
  }
  return true;
}

Result<std::string> interpolate(std::string_view text, const EnvLookup& getenv) {
  std::string out;
  out.reserve(text.size());
  std::size_t i = 0;
  while (i < text.size()) {
    const char c = text[i];
    if (c != '$' || i + 1 == text.size()) {
      out.push_back(c);
      ++i;
      continue;
    }
    const char next = text[i + 1];
    if (next == '$') {
      out.push_back('$');
      i += 2;
      continue;
    }
    if (next != '{') {
      out.push_back(c);
      ++i;
      continue;
    }
    const std::size_t close = text.find('}', i + 2);
    if (close == std::string_view::npos) {
      return syntax_error(
          "unterminated ${ (expected ${NAME} or ${NAME:-default}; write $$ for a literal $)");
    }
    const std::string_view expr = text.substr(i + 2, close - (i + 2));
    std::string_view name = expr;
    std::optional<std::string_view> fallback;
    if (const std::size_t colon = expr.find(':'); colon != std::string_view::npos) {
      name = expr.substr(0, colon);
      const std::string_view rest = expr.substr(colon);
      if (rest.size() < 2 || rest[1] != '-') {
        return syntax_error("invalid ${...} expression: use ${NAME} or ${NAME:-default}");
      }
      fallback = rest.substr(2);
      if (fallback->find("${") != std::string_view::npos) {
        return syntax_error("nested ${...} in a default value is not supported");
      }
    }
    if (!is_env_name(name)) {
      if (name.empty()) {
        return syntax_error("empty variable name in ${}");
      }
      // The name is not a valid variable name, so it is probably not one: do not echo it.
      return syntax_error(
          "invalid variable name in ${...} (names are [A-Za-z_][A-Za-z0-9_]*; write $$ for a "
          "literal $)");
    }
    const std::optional<std::string> value = getenv(std::string(name));
    if (fallback) {
      if (value && !value->empty()) {
        out += *value;
      } else {
        out += *fallback;
      }
    } else {
      if (!value) {
        return syntax_error("environment variable " + std::string(name) + " is not set (use ${" +
                            std::string(name) + ":-default} to give a default)");
      }
      out += *value;
    }
    i = close + 1;
  }
  return out;
}

}  // namespace sluice::config
