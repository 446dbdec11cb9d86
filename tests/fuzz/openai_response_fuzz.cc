// protocol/openai_chat/response.h: decode_response (and stream_sniffer.h
// usage_from_response) on arbitrary bytes. A decoded answer is translated to an Anthropic
// message, as the gateway does for an Anthropic caller: that either fails cleanly or is
// valid JSON ("never a wrong body", anthropic/response.h).

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "fuzz_support.h"
#include "protocol/anthropic/response.h"
#include "protocol/openai_chat/response.h"
#include "protocol/openai_chat/stream_sniffer.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace oc = sluice::protocol::openai_chat;
  const std::string_view body(reinterpret_cast<const char*>(data), size);
  (void)oc::usage_from_response(body);
  auto response = oc::decode_response(body);
  if (!response) {
    return 0;
  }
  if (auto out = sluice::protocol::anthropic::encode_response(*response)) {
    const auto v = sluice::fuzz::expect_json(*out, "encode_response wrote invalid JSON");
    sluice::fuzz::check(v.is_object(), "encode_response wrote a non-object");
  }
  return 0;
}
