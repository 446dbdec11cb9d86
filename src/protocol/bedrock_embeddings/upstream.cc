#include "protocol/bedrock_embeddings/upstream.h"

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/serialize.hpp>

#include "protocol/wire_json.h"

namespace sluice::protocol::bedrock_embeddings {
namespace json = boost::json;

using protocol::wire::upstream_error;

namespace {

bool contains(std::string_view text, std::string_view part) {
  return text.find(part) != std::string_view::npos;
}

Error bad_request(std::string message, std::string param) {
  return Error(ErrorKind::kBadRequest, std::move(message)).with_param(std::move(param));
}

Error no_dimensions(std::string_view model) {
  return bad_request("model " + std::string(model) +
                         " has no choice of dimensions on Bedrock; leave 'dimensions' out",
                     "dimensions");
}

json::array texts_of(const ir::Embed& embed) {
  json::array texts;
  texts.reserve(embed.inputs.size());
  for (const std::string& input : embed.inputs) {
    texts.emplace_back(input);
  }
  return texts;
}

Result<std::string> titan_body(const ir::Embed& embed, Family family, std::string_view model) {
  if (embed.inputs.size() != 1) {
    return Error(ErrorKind::kBadRequest,
                 "model " + std::string(model) + " embeds one input per request on Bedrock; " +
                     "this request has " + std::to_string(embed.inputs.size()) +
                     " (send them one at a time, or route to Cohere Embed, which takes up to " +
                     std::to_string(kMaxCohereTexts) + ")")
        .with_code("too_many_inputs")
        .with_param("input");
  }
  json::object body;
  body["inputText"] = embed.inputs.front();
  if (family == Family::kTitanTextV2) {
    if (embed.dimensions) {
      body["dimensions"] = *embed.dimensions;
    }
    body["normalize"] = true;  // OpenAI's vectors are unit length; callers compare by dot product
  } else if (family == Family::kTitanMultimodal) {
    if (embed.dimensions) {
      body["embeddingConfig"] = json::object{{"outputEmbeddingLength", *embed.dimensions}};
    }
  } else if (embed.dimensions) {
    return no_dimensions(model);
  }
  return json::serialize(body);
}

Result<std::string> cohere_body(const ir::Embed& embed, Family family, std::string_view model) {
  if (embed.inputs.size() > kMaxCohereTexts) {
    return Error(ErrorKind::kBadRequest, "model " + std::string(model) + " embeds at most " +
                                             std::to_string(kMaxCohereTexts) +
                                             " inputs per request on Bedrock; this " +
                                             "request has " + std::to_string(embed.inputs.size()))
        .with_code("too_many_inputs")
        .with_param("input");
  }
  json::object body;
  body["texts"] = texts_of(embed);
  body["input_type"] = embed.input_type.empty() ? "search_document" : embed.input_type;
  if (embed.dimensions) {
    if (family != Family::kCohereV4) {
      return no_dimensions(model);
    }
    body["output_dimension"] = *embed.dimensions;
  }
  return json::serialize(body);
}

// One vector of numbers.
Result<std::vector<double>> vector_of(const json::value& v) {
  const json::array* numbers = v.if_array();
  if (numbers == nullptr) {
    return upstream_error("upstream embedding is not an array");
  }
  std::vector<double> out;
  out.reserve(numbers->size());
  for (const json::value& n : *numbers) {
    if (n.is_double()) {
      out.push_back(n.get_double());
    } else if (n.is_int64()) {
      out.push_back(static_cast<double>(n.get_int64()));
    } else if (n.is_uint64()) {
      out.push_back(static_cast<double>(n.get_uint64()));
    } else {
      return upstream_error("upstream embedding holds a value that is not a number");
    }
  }
  return out;
}

}  // namespace

Family family_of(std::string_view model_id) {
  if (contains(model_id, "amazon.titan-embed-text-v2")) {
    return Family::kTitanTextV2;
  }
  if (contains(model_id, "amazon.titan-embed-text-v1") ||
      contains(model_id, "amazon.titan-embed-g1-text")) {
    return Family::kTitanTextV1;
  }
  if (contains(model_id, "amazon.titan-embed-image")) {
    return Family::kTitanMultimodal;
  }
  if (contains(model_id, "cohere.embed-v4")) {
    return Family::kCohereV4;
  }
  if (contains(model_id, "cohere.embed-")) {
    return Family::kCohereV3;
  }
  return Family::kUnknown;
}

Result<std::string> EmbeddingsUpstream::encode_request(const ir::Request& request,
                                                       const EncodeTarget& target) const {
  const ir::Embed& embed = request.embed;
  switch (const Family family = family_of(target.model)) {
    case Family::kTitanTextV1:
    case Family::kTitanTextV2:
    case Family::kTitanMultimodal:
      return titan_body(embed, family, target.model);
    case Family::kCohereV3:
    case Family::kCohereV4:
      return cohere_body(embed, family, target.model);
    case Family::kUnknown:
      break;
  }
  return bad_request("model " + std::string(target.model) +
                         " is not a Bedrock embedding model Sluice can call (Amazon Titan Text "
                         "Embeddings, Titan Multimodal Embeddings, Cohere Embed)",
                     "model");
}

Result<ir::Response> EmbeddingsUpstream::decode_response(std::string_view body) const {
  codec::SmallDocumentArena arena;
  auto doc = protocol::wire::parse_answer(body, "embeddings answer", arena);
  if (!doc) {
    return std::move(doc).error();
  }
  const json::object& o = doc->get_object();
  ir::Response out;
  if (const json::value* titan = o.if_contains("embedding")) {
    auto vector = vector_of(*titan);
    if (!vector) {
      return std::move(vector).error();
    }
    out.embeddings.push_back(std::move(*vector));
    if (const json::value* count = o.if_contains("inputTextTokenCount")) {
      if (!count->is_int64() || count->get_int64() < 0) {
        return upstream_error("upstream inputTextTokenCount is not a non-negative integer");
      }
      out.usage = ir::Usage{.input_tokens = static_cast<std::uint64_t>(count->get_int64())};
    }
    return out;
  }
  const json::value* cohere = o.if_contains("embeddings");
  if (cohere != nullptr && cohere->is_object()) {  // asked for by type: {"float": [[...]]}
    cohere = cohere->get_object().if_contains("float");
  }
  if (cohere == nullptr || !cohere->is_array()) {
    return upstream_error("upstream embeddings answer has neither embedding nor embeddings");
  }
  out.embeddings.reserve(cohere->get_array().size());
  for (const json::value& v : cohere->get_array()) {
    auto vector = vector_of(v);
    if (!vector) {
      return std::move(vector).error();
    }
    out.embeddings.push_back(std::move(*vector));
  }
  if (const json::value* id = o.if_contains("id"); id != nullptr && id->is_string()) {
    out.id = std::string(id->get_string());
  }
  return out;
}

std::unique_ptr<protocol::StreamDecoder> EmbeddingsUpstream::make_stream_decoder() const {
  return nullptr;
}

}  // namespace sluice::protocol::bedrock_embeddings
