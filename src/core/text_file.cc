#include "core/text_file.h"

#include <fstream>
#include <sstream>

namespace sluice {

Result<std::string> read_text_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return Error(ErrorKind::kNotFound, path + ": cannot read file");
  }
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace sluice
