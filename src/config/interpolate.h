#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "core/result.h"

namespace sluice::config {

// Looks up an environment variable; nullopt means "not set". Same type as
// LoadOptions::getenv.
using EnvLookup = std::function<std::optional<std::string>(const std::string&)>;

// Expands environment references in one scalar taken from a config file:
//   ${NAME}            the value of NAME; an error if NAME is not set (set but empty gives "")
//   ${NAME:-default}   the value of NAME, or `default` when NAME is unset or empty; the
//                      default is literal text (no nesting, no '}')
//   $$                 a literal '$'
// Any other '$' is kept as is. NAME is [A-Za-z_][A-Za-z0-9_]*.
// Error messages name the variable or the syntax problem but never repeat `text` or any
// value (the text may be a secret). Pure; runs on the caller's thread.
Result<std::string> interpolate(std::string_view text, const EnvLookup& getenv);

// True if `name` is a valid environment variable name for ${NAME}.
bool is_env_name(std::string_view name);

}  // namespace sluice::config
