// protocol/openai_responses: ResponsesIngress::decode (the light envelope decode of the
// passthrough path) and decode_request (the full decode of the translated path) on arbitrary
// bytes. The light decode accepts whatever the full one accepts, and its passthrough body is the
// same JSON with only the model replaced. An accepted request encodes back to Responses
// (encode_request: kBadRequest, or a body that decodes again, with encoding a fixed point after
// one decode), to OpenAI Chat Completions (valid JSON carrying the upstream model) and to
// Anthropic (check_anthropic_encoding).

#include <algorithm>
#include <cmath>
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

// Whether `a` and `b` are the same JSON but for doubles a last bit apart: the body without
// sealed reasoning is written back from a DOM, and Boost.JSON 1.81 parses a literal such as
// -5e90 to a neighbour of the nearest double, so parsing what it wrote may land one ulp away.
bool same_but_last_bits(const boost::json::value& a, const boost::json::value& b) {
  if (a.is_double() && b.is_double()) {
    const double x = a.get_double();
    const double y = b.get_double();
    return x == y || std::fabs(x - y) <= 1e-15 * std::max(std::fabs(x), std::fabs(y));
  }
  if (a.kind() != b.kind()) {
    return false;
  }
  if (a.is_array()) {
    const boost::json::array& x = a.get_array();
    const boost::json::array& y = b.get_array();
    if (x.size() != y.size()) return false;
    for (std::size_t i = 0; i < x.size(); ++i) {
      if (!same_but_last_bits(x[i], y[i])) return false;
    }
    return true;
  }
  if (a.is_object()) {
    const boost::json::object& x = a.get_object();
    const boost::json::object& y = b.get_object();
    if (x.size() != y.size()) return false;
    for (auto i = x.begin(), j = y.begin(); i != x.end(); ++i, ++j) {
      if (i->key() != j->key() || !same_but_last_bits(i->value(), j->value())) return false;
    }
    return true;
  }
  return boost::json::serialize(a) == boost::json::serialize(b);
}

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
    // never equal to itself, though the bytes went through untouched. Only a body that held
    // sealed reasoning is written back from a DOM (its doubles may move a last bit).
    const bool rewritten = body.find(sluice::protocol::kSealedReasoningPrefix) != body.npos;
    check(boost::json::serialize(original) == boost::json::serialize(spliced) ||
              (rewritten && same_but_last_bits(original, spliced)),
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
