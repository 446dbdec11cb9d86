// protocol/gemini/request_decoder.h: decode_request on arbitrary bytes (a Gemini caller's body).
// What it accepts must translate to Anthropic (check_anthropic_encoding) and OpenAI (valid JSON
// with the upstream model), and encode back to Gemini as check_gemini_encoding expects. The same
// bytes are also read as an Anthropic and as an OpenAI Chat request: the IR of other callers
// must encode for a Gemini upstream under the same promise.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "anthropic_encoding_check.h"
#include "fuzz_support.h"
#include "ir/request.h"
#include "protocol/anthropic/request_decoder.h"
#include "protocol/gemini/request_decoder.h"
#include "protocol/gemini/request_encoder.h"
#include "protocol/openai_chat/request_decoder.h"
#include "protocol/openai_chat/request_encoder.h"

namespace {
namespace gm = sluice::protocol::gemini;
using sluice::fuzz::check;
constexpr std::string_view kUpstreamModel = "up\"stream\\model-\xC3\xA9";

// encode_request either fails with kBadRequest or writes a JSON object without a model (the
// model is in the URL) that decode_request accepts; that IR encodes again, and from there
// encoding is a fixed point (its normalisations apply once).
void check_gemini_encoding(const sluice::ir::Request& request) {
  auto body = gm::encode_request(request);
  if (!body) {
    check(body.error().kind() == sluice::ErrorKind::kBadRequest,
          "gemini::encode_request failed with a kind other than kBadRequest",
          body.error().message());
    return;
  }
  const auto v = sluice::fuzz::expect_json(*body, "gemini::encode_request wrote invalid JSON");
  check(v.is_object() && !v.get_object().contains("model"),
        "gemini::encode_request wrote a non-object or a body with a model", *body);
  auto decoded = gm::decode_request(*body);
  check(decoded.has_value(), "gemini::encode_request wrote a body decode_request rejects",
        decoded ? *body : decoded.error().message() + " in " + *body);
  auto again = gm::encode_request(*decoded);
  check(again.has_value(), "what gemini::encode_request wrote does not encode again",
        again ? *body : again.error().message() + " in " + *body);
  auto redecoded = gm::decode_request(*again);
  check(redecoded.has_value(), "the second Gemini encoding does not decode", *again);
  auto third = gm::encode_request(*redecoded);
  check(third.has_value() && sluice::fuzz::same_encoding(*third, *again),
        "gemini::encode_request is not a fixed point after one decode",
        *again + "\n" + (third ? *third : third.error().message()));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view body(reinterpret_cast<const char*>(data), size);
  gm::DecodeStats stats;
  auto req = gm::decode_request(body, &stats);
  if (req) {
    check_gemini_encoding(*req);
    req->model = "alias";
    sluice::fuzz::check_anthropic_encoding(*req, req->stream);
    const std::string up =
        sluice::protocol::openai_chat::encode_request(*req, kUpstreamModel, req->stream);
    sluice::fuzz::check_model(up, kUpstreamModel);
  } else {
    check(req.error().kind() == sluice::ErrorKind::kBadRequest,
          "gemini::decode_request failed with a kind other than kBadRequest");
  }
  if (auto anthropic = sluice::protocol::anthropic::decode_request(body)) {
    check_gemini_encoding(*anthropic);
  }
  if (auto openai = sluice::protocol::openai_chat::decode_request(body)) {
    check_gemini_encoding(*openai);
  }
  return 0;
}
