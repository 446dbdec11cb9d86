// protocol/openai_chat/request_decoder.h: decode_request on arbitrary bytes. What it accepts must
// encode (streaming or not, either output-limit field) to valid JSON carrying the upstream
// model, and that body must decode again. It must also translate to Anthropic (the OpenAI
// caller -> Anthropic upstream path) as check_anthropic_encoding expects.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "anthropic_encoding_check.h"
#include "fuzz_support.h"
#include "protocol/openai_chat/request_decoder.h"
#include "protocol/openai_chat/request_encoder.h"

namespace {
namespace oc = sluice::protocol::openai_chat;
using sluice::fuzz::check;
constexpr std::string_view kUpstreamModel = "up\"stream\\model-\xC3\xA9";
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view body(reinterpret_cast<const char*>(data), size);
  auto req = oc::decode_request(body);
  if (!req) {
    return 0;
  }
  for (const bool max_completion_tokens : {false, true}) {
    oc::EncodeOptions options;
    options.use_max_completion_tokens = max_completion_tokens;
    const bool stream = req->stream != max_completion_tokens;
    const std::string up = oc::encode_request(*req, kUpstreamModel, stream, options);
    sluice::fuzz::check_model(up, kUpstreamModel);
    auto again = oc::decode_request(up);
    check(again.has_value(), "encode_request wrote a body decode_request rejects",
          again ? up : again.error().message() + " in " + up);
  }
  sluice::fuzz::check_anthropic_encoding(*req, req->stream);
  return 0;
}
