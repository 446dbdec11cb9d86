// Embeddings translation on arbitrary bytes, both directions:
//   - as a caller's body: EmbeddingsIngress::decode, to_ir, then every Bedrock family's
//     encode_request, and encode_response_for over vectors for each input (float and base64);
//   - as an upstream answer: bedrock_embeddings decode_response, then encode_response.
// Decoding fails only with kBadRequest (caller) or kUpstreamProtocol (upstream); every body
// written is valid JSON; a Bedrock body holds exactly the inputs to_ir read; the OpenAI list
// holds one item per vector, in order.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_support.h"
#include "protocol/bedrock_embeddings/upstream.h"
#include "protocol/openai_chat/embeddings_ingress.h"

namespace {
namespace be = sluice::protocol::bedrock_embeddings;
namespace json = boost::json;
using sluice::ErrorKind;
using sluice::fuzz::check;
using sluice::fuzz::expect_json;

class NoHead final : public sluice::codec::RequestHead {
 public:
  std::string_view method() const override { return "POST"; }
  std::string_view target() const override { return "/v1/embeddings"; }
  std::string_view header(std::string_view) const override { return {}; }
  bool has_header(std::string_view) const override { return false; }
  void for_each_header(
      sluice::FunctionRef<void(std::string_view, std::string_view)>) const override {}
};

const sluice::protocol::openai_chat::EmbeddingsIngress kIngress;
const be::EmbeddingsUpstream kBedrock;
constexpr std::string_view kModels[] = {"amazon.titan-embed-text-v2:0",
                                        "amazon.titan-embed-text-v1", "amazon.titan-embed-image-v1",
                                        "cohere.embed-english-v3", "us.cohere.embed-v4:0"};

void check_list(const std::string& body, std::size_t vectors) {
  const json::value v = expect_json(body, "encoded embeddings list is not valid JSON");
  const json::value* data = v.is_object() ? v.get_object().if_contains("data") : nullptr;
  check(data != nullptr && data->is_array() && data->get_array().size() == vectors,
        "the list does not hold one item per vector", body);
}

void as_caller_body(std::string_view body) {
  auto decoded = kIngress.decode(body, NoHead());
  if (!decoded) {
    return;
  }
  auto ir = kIngress.to_ir(*decoded);
  if (!ir) {
    check(ir.error().kind() == ErrorKind::kBadRequest, "to_ir failed with another kind than 400",
          ir.error().message());
    return;
  }
  check(!ir->embed.inputs.empty(), "to_ir accepted a request with nothing to embed");
  for (std::string_view model : kModels) {
    auto up = kBedrock.encode_request(*ir, {.model = model, .stream = false, .options = {}});
    if (!up) {
      check(up.error().kind() == ErrorKind::kBadRequest, "encode failed with another kind than 400",
            up.error().message());
      continue;
    }
    const json::value sent = expect_json(*up, "the Bedrock body is not valid JSON");
    const json::object& o = sent.as_object();
    if (const json::value* text = o.if_contains("inputText")) {
      check(ir->embed.inputs.size() == 1 && text->as_string() == ir->embed.inputs.front(),
            "Titan's inputText is not the one input", *up);
    } else {
      const json::array& texts = o.at("texts").as_array();
      check(texts.size() == ir->embed.inputs.size(), "Cohere's texts are not the inputs", *up);
      for (std::size_t i = 0; i < texts.size(); ++i) {
        check(texts[i].as_string() == ir->embed.inputs[i], "a Cohere text differs", *up);
      }
    }
  }
  sluice::ir::Response answer;
  for (std::size_t i = 0; i < ir->embed.inputs.size() && i < 64; ++i) {
    answer.embeddings.push_back({static_cast<double>(i), -0.5, 1e-30, 3.4e38});
  }
  bool clamped = false;
  auto encoded = kIngress.encode_response_for(*decoded, answer, clamped);
  check(encoded.has_value(), "encode_response_for failed");
  check_list(*encoded, answer.embeddings.size());
}

void as_upstream_answer(std::string_view body) {
  auto decoded = kBedrock.decode_response(body);
  if (!decoded) {
    check(decoded.error().kind() == ErrorKind::kUpstreamProtocol,
          "decode_response failed with another kind than kUpstreamProtocol",
          decoded.error().message());
    return;
  }
  bool clamped = false;
  auto encoded = kIngress.encode_response(*decoded, clamped);
  check(encoded.has_value(), "encode_response failed");
  check_list(*encoded, decoded->embeddings.size());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  as_caller_body(bytes);
  as_upstream_answer(bytes);
  return 0;
}
