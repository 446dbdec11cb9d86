// protocol/openai_responses: ResponsesIngress::decode (the light envelope decode of the
// passthrough path) and decode_request (the full decode of the translated path) on arbitrary
// bytes. The light decode accepts whatever the full one accepts, and its passthrough body is the
// same JSON with only the model replaced. An accepted request encodes back to Responses
// (encode_request: kBadRequest, or a body that decodes again, with encoding a fixed point after
// one decode), to OpenAI Chat Completions (valid JSON carrying the upstream model) and to
// Anthropic (check_anthropic_encoding).

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include <boost/json/serialize.hpp>

#include "anthropic_encoding_check.h"
#include "fuzz_support.h"
#include "protocol/openai_chat/request_decoder.h"
#include "protocol/openai_chat/request_encoder.h"
#include "protocol/openai_responses/ingress.h"
#include "protocol/openai_responses/request_decoder.h"
#include "protocol/openai_responses/request_encoder.h"
#include "protocol/sealed_reasoning.h"

namespace {

// decode() reads no header.
class NoHead final : public sluice::codec::RequestHead {
 public:
  std::string_view method() const override { return "POST"; }
  std::string_view target() const override { return "/v1/responses"; }
  std::string_view header(std::string_view) const override { return {}; }
  bool has_header(std::string_view) const override { return false; }
  void for_each_header(
      sluice::FunctionRef<void(std::string_view, std::string_view)>) const override {}
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace rs = sluice::protocol::openai_responses;
  namespace oc = sluice::protocol::openai_chat;
  using sluice::fuzz::check;
  constexpr std::string_view kUpstreamModel = "up\"stream\\model-\xC3\xA9";
  const std::string_view body(reinterpret_cast<const char*>(data), size);

  static const rs::ResponsesIngress ingress;
  const NoHead head;
  auto light = ingress.decode(body, head);
  if (light) {
    const std::string up = ingress.passthrough_body(*light, kUpstreamModel);
    auto original = sluice::fuzz::expect_json(body, "the light decode accepted invalid JSON");
    auto spliced = sluice::fuzz::expect_json(up, "passthrough body is not valid JSON");
    check(original.is_object() && spliced.is_object(), "passthrough body is not an object", up);
    original.get_object()["model"] = kUpstreamModel;
    // Reasoning the gateway sealed for another kind of upstream never reaches a Responses one
    // (ResponsesIngress::passthrough_body): those input items are the one other difference.
    if (boost::json::value* input = original.get_object().if_contains("input");
        input != nullptr && input->is_array()) {
      boost::json::array& items = input->get_array();
      const auto sealed_item = [](const boost::json::value& item) {
        const boost::json::object* o = item.if_object();
        const boost::json::value* type = o != nullptr ? o->if_contains("type") : nullptr;
        const boost::json::value* sealed =
            o != nullptr ? o->if_contains("encrypted_content") : nullptr;
        return type != nullptr && type->is_string() && type->get_string() == "reasoning" &&
               sealed != nullptr && sealed->is_string() &&
               std::string_view(sealed->get_string())
                   .starts_with(sluice::protocol::kSealedReasoningPrefix);
      };
      items.erase(std::remove_if(items.begin(), items.end(), sealed_item), items.end());
    }
    // Compared as serialized text: Boost.JSON reads a number such as 0e29256 as NaN, which is
    // never equal to itself, though the bytes went through untouched.
    check(boost::json::serialize(original) == boost::json::serialize(spliced),
          "passthrough body changes more than the model", up);
  }

  rs::DecodeStats stats;
  auto full = rs::decode_request(body, &stats);
  if (!full) {
    check(full.error().kind() == sluice::ErrorKind::kBadRequest,
          "decode_request failed with a kind other than kBadRequest", full.error().message());
    return 0;
  }
  check(light.has_value(), "the full decode accepts what the light decode rejects",
        light ? std::string_view() : std::string_view(light.error().message()));

  auto encoded = rs::encode_request(*full, kUpstreamModel, full->stream);
  if (!encoded) {
    check(encoded.error().kind() == sluice::ErrorKind::kBadRequest,
          "encode_request failed with a kind other than kBadRequest", encoded.error().message());
  } else {
    sluice::fuzz::check_model(*encoded, kUpstreamModel);
    auto again = rs::decode_request(*encoded);
    check(again.has_value(), "encode_request wrote a body decode_request rejects", *encoded);
    auto twice = rs::encode_request(*again, kUpstreamModel, again->stream);
    check(twice.has_value() && sluice::fuzz::same_encoding(*twice, *encoded),
          "encoding is not a fixed point after one decode",
          *encoded + "\n" + (twice ? *twice : twice.error().message()));
  }

  sluice::fuzz::check_model(oc::encode_request(*full, kUpstreamModel, full->stream),
                            kUpstreamModel);
  sluice::fuzz::check_anthropic_encoding(*full, full->stream);
  return 0;
}
