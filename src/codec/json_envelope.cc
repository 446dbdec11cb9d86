#include "codec/json_envelope.h"

#include "codec/json_writer.h"

namespace sluice::codec {

std::string splice_json_string(std::string_view body, std::size_t begin, std::size_t end,
                               std::string_view value) {
  std::string out;
  out.reserve(body.size() + value.size() + 2);
  out.append(body.substr(0, begin));
  JsonWriter(out).string(value);
  out.append(body.substr(end));
  return out;
}

}  // namespace sluice::codec
