// protocol/anthropic/request_decoder.h: decode_request on arbitrary bytes, strict and not.
// Strict mode only adds rejections, so what it accepts the default mode accepts too. An
// accepted request must translate (openai_chat::encode_request, the Anthropic caller ->
// OpenAI upstream path) into valid JSON carrying the upstream model, and encode back to
// Anthropic (anthropic::encode_request) as check_anthropic_encoding expects.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "anthropic_encoding_check.h"
#include "fuzz_support.h"
#include "protocol/anthropic/request_decoder.h"
#include "protocol/openai_chat/request_decoder.h"
#include "protocol/openai_chat/request_encoder.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace an = sluice::protocol::anthropic;
  namespace oc = sluice::protocol::openai_chat;
  constexpr std::string_view kUpstreamModel = "up\"stream\\model-\xC3\xA9";
  const std::string_view body(reinterpret_cast<const char*>(data), size);
  an::DecodeStats stats;
  auto lax = an::decode_request(body, {}, &stats);
  an::DecodeOptions strict_options;
  strict_options.strict = true;
  auto strict = an::decode_request(body, strict_options);
  sluice::fuzz::check(!strict || lax, "strict decode accepts what the default rejects");
  if (!lax) {
    return 0;
  }
  const std::string up = oc::encode_request(*lax, kUpstreamModel, lax->stream);
  sluice::fuzz::check_model(up, kUpstreamModel);
  sluice::fuzz::check_anthropic_encoding(*lax, lax->stream);
  return 0;
}
