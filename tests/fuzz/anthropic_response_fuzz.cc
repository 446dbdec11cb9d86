// protocol/anthropic/response.h: decode_response on arbitrary bytes. A decoded answer
// is encoded back (encode_response); when that succeeds it must be a valid JSON message that
// decode_response accepts again.

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "fuzz_support.h"
#include "protocol/anthropic/response.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace an = sluice::protocol::anthropic;
  using sluice::fuzz::check;
  const std::string_view body(reinterpret_cast<const char*>(data), size);
  auto response = an::decode_response(body);
  if (!response) {
    return 0;
  }
  auto out = an::encode_response(*response);
  if (!out) {
    return 0;
  }
  const auto v = sluice::fuzz::expect_json(*out, "encode_response wrote invalid JSON");
  check(v.is_object(), "encode_response wrote a non-object");
  auto again = an::decode_response(*out);
  check(again.has_value(), "decode_response rejects what encode_response wrote",
        again ? std::string_view(*out) : std::string_view(again.error().message()));
  return 0;
}
