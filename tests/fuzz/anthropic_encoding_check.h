#pragma once

// The promise of anthropic::encode_request (protocol/anthropic/request_encoder.h), checked on
// every IR request a fuzzed decoder accepts (anthropic_request_fuzz, openai_ir_request_fuzz).

#include <string>
#include <string_view>

#include "fuzz_support.h"
#include "ir/request.h"
#include "protocol/anthropic/request_decoder.h"
#include "protocol/anthropic/request_encoder.h"

namespace sluice::fuzz {

// With budget thinking and with adaptive thinking: encode_request either fails with
// kBadRequest or writes a body carrying the upstream model and `stream` that
// anthropic::decode_request accepts; that IR encodes again, and from there encoding is a fixed
// point (the encoder's normalisations apply once: encode(decode(body)) == body).
inline void check_anthropic_encoding(const ir::Request& request, bool stream) {
  namespace an = protocol::anthropic;
  constexpr std::string_view kModel = "up\"stream\\model-\xC3\xA9";
  for (const bool adaptive : {false, true}) {
    an::EncodeOptions options;
    options.adaptive_thinking = adaptive;
    auto body = an::encode_request(request, kModel, stream, options);
    if (!body) {
      check(body.error().kind() == ErrorKind::kBadRequest,
            "anthropic::encode_request failed with a kind other than kBadRequest",
            body.error().message());
      continue;
    }
    check_model(*body, kModel);
    auto decoded = an::decode_request(*body);
    check(decoded.has_value(), "anthropic::encode_request wrote a body decode_request rejects",
          decoded ? *body : decoded.error().message() + " in " + *body);
    check(decoded->stream == stream, "anthropic::encode_request lost the stream flag", *body);
    auto again = an::encode_request(*decoded, kModel, stream, options);
    check(again.has_value(), "what anthropic::encode_request wrote does not encode again",
          again ? *body : again.error().message() + " in " + *body);
    auto redecoded = an::decode_request(*again);
    check(redecoded.has_value(), "the second encoding does not decode", *again);
    auto third = an::encode_request(*redecoded, kModel, stream, options);
    check(third.has_value() && same_encoding(*third, *again),
          "anthropic::encode_request is not a fixed point after one decode",
          *again + "\n" + (third ? *third : third.error().message()));
  }
}

}  // namespace sluice::fuzz
