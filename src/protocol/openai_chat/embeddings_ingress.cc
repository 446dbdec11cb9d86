#include "protocol/openai_chat/embeddings_ingress.h"

#include <bit>
#include <cstring>

#include <boost/json/value.hpp>

#include "codec/base64.h"
#include "codec/json_writer.h"
#include "protocol/openai_chat/envelope.h"
#include "protocol/openai_chat/ingress.h"

namespace sluice::protocol::openai_chat {
namespace json = boost::json;

namespace {

Error bad_request(std::string message, std::string param) {
  return Error(ErrorKind::kBadRequest, std::move(message)).with_param(std::move(param));
}

// IngressRequest::codec_flags: to_ir read encoding_format "base64", so the answer's vectors are
// base64 (bit 1 is ChatRequest's has_stream_options, which an embeddings request never sets).
constexpr std::uint32_t kBase64Vectors = 2;

// The vector as OpenAI's base64 form: its float32 values, little-endian, base64-encoded.
void append_base64_vector(std::string& out, const std::vector<double>& vector) {
  std::string bytes(vector.size() * 4, '\0');
  for (std::size_t i = 0; i < vector.size(); ++i) {
    auto bits = std::bit_cast<std::uint32_t>(static_cast<float>(vector[i]));
    if constexpr (std::endian::native == std::endian::big) {
      bits = __builtin_bswap32(bits);
    }
    std::memcpy(bytes.data() + i * 4, &bits, 4);
  }
  codec::append_base64(out, bytes);
}

std::string encode_list(const ir::Response& response, std::string_view model, bool base64) {
  std::size_t floats = 0;
  for (const auto& v : response.embeddings) {
    floats += v.size();
  }
  std::string out;
  out.reserve(64 + floats * (base64 ? 6 : 22) + response.embeddings.size() * 48);
  codec::JsonWriter w(out);
  w.raw(R"({"object":"list","data":[)");
  for (std::size_t i = 0; i < response.embeddings.size(); ++i) {
    w.raw(i == 0 ? R"({"object":"embedding","index":)" : R"(,{"object":"embedding","index":)");
    w.number(static_cast<std::uint64_t>(i)).next_key("embedding");
    if (base64) {
      w.ch('"');
      append_base64_vector(out, response.embeddings[i]);
      w.ch('"');
    } else {
      w.ch('[');
      bool first = true;
      for (double x : response.embeddings[i]) {
        if (!first) {
          w.ch(',');
        }
        first = false;
        w.number(x);
      }
      w.ch(']');
    }
    w.ch('}');
  }
  w.raw("]").next_key("model").string(model);
  const std::uint64_t tokens = response.usage ? response.usage->input_tokens : 0;
  w.next_key("usage").raw(R"({"prompt_tokens":)").number(tokens);
  w.next_key("total_tokens").number(tokens).raw("}}");
  return out;
}

}  // namespace

ProtocolId EmbeddingsIngress::protocol() const { return kEmbeddingsProtocol; }

Result<IngressRequest> EmbeddingsIngress::decode(std::string_view body,
                                                 const codec::RequestHead& /*head*/) const {
  auto decoded = decode_embeddings_request(body);
  if (!decoded) {
    return std::move(decoded).error();
  }
  IngressRequest request(std::move(*decoded));
  request.stream = false;  // embeddings have no streams; a "stream" field is the caller's noise
  return request;
}

Result<ir::Request> EmbeddingsIngress::to_ir(IngressRequest& request) const {
  const ChatRequest chat(request);  // owns the document the views below point into
  const json::value& doc = chat.document();
  const json::object* root = doc.if_object();
  const json::value* input = root != nullptr ? root->if_contains("input") : nullptr;
  if (input == nullptr || (!input->is_string() && !input->is_array())) {
    return bad_request("'input' must be a string or an array of strings", "input");
  }
  const json::object& o = *root;
  ir::Request out;
  out.model = request.model;
  const auto add_text = [&](const json::value& v) {
    if (!v.is_string()) {
      return false;
    }
    out.embed.inputs.emplace_back(v.get_string());
    return true;
  };
  if (!add_text(*input)) {
    for (const json::value& item : input->get_array()) {
      if (!add_text(item)) {
        return Error(ErrorKind::kBadRequest,
                     "token-id input can only be served by a provider that speaks the OpenAI "
                     "embeddings API; send the text instead")
            .with_code("translation_unsupported")
            .with_param("input");
      }
    }
  }
  if (out.embed.inputs.empty()) {
    return bad_request("'input' cannot be an empty array", "input");
  }
  if (const json::value* d = o.if_contains("dimensions"); d != nullptr && !d->is_null()) {
    if (!d->is_int64() || d->get_int64() < 1 || d->get_int64() > 1'000'000) {
      return bad_request("'dimensions' must be a positive integer", "dimensions");
    }
    out.embed.dimensions = static_cast<std::uint32_t>(d->get_int64());
  }
  if (const json::value* f = o.if_contains("encoding_format"); f != nullptr && !f->is_null()) {
    if (!f->is_string() || (f->get_string() != "float" && f->get_string() != "base64")) {
      return bad_request("'encoding_format' must be \"float\" or \"base64\"", "encoding_format");
    }
    if (f->get_string() == "base64") {
      request.codec_flags |= kBase64Vectors;
    }
  }
  if (const json::value* t = o.if_contains("input_type"); t != nullptr && !t->is_null()) {
    if (!t->is_string()) {
      return bad_request("'input_type' must be a string", "input_type");
    }
    out.embed.input_type = std::string(t->get_string());
  }
  if (const json::value* u = o.if_contains("user"); u != nullptr && u->is_string()) {
    out.user = std::string(u->get_string());
  }
  return out;
}

std::string EmbeddingsIngress::passthrough_body(const IngressRequest& request,
                                                std::string_view upstream_model) const {
  return encode_upstream_body(ChatRequest(request), upstream_model,
                              /*force_include_usage=*/false);
}

Result<std::string> EmbeddingsIngress::encode_response(const ir::Response& response,
                                                       bool& /*usage_clamped*/) const {
  return encode_list(response, response.model, /*base64=*/false);
}

Result<std::string> EmbeddingsIngress::encode_response_for(const IngressRequest& request,
                                                           const ir::Response& response,
                                                           bool& /*usage_clamped*/) const {
  return encode_list(response, request.model, (request.codec_flags & kBase64Vectors) != 0);
}

}  // namespace sluice::protocol::openai_chat
