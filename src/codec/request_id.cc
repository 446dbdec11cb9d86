#include "codec/request_id.h"

namespace sluice::codec {

bool acceptable_request_id(std::string_view id) {
  if (id.empty() || id.size() > 128) {
    return false;
  }
  for (unsigned char c : id) {
    if (c <= 0x20 || c >= 0x7f || c == '"' || c == '\\') {
      return false;
    }
  }
  return true;
}

}  // namespace sluice::codec
