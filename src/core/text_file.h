#pragma once

#include <string>

#include "core/result.h"

namespace sluice {

// The whole file at `path`, or kNotFound with the message "<path>: cannot read file". Blocking:
// start-up and command-line use only.
Result<std::string> read_text_file(const std::string& path);

}  // namespace sluice
