#include "bedrock_embed.h"

#include <string>

#include <boost/json.hpp>

#include "bedrock_responder.h"
#include "codec/json_writer.h"
#include "reply_content.h"

namespace sluice::mock {
namespace {

namespace json = boost::json;

Error malformed(std::string detail) {
  return Error(ErrorKind::kBadRequest, "Malformed input request: " + std::move(detail) +
                                           ", please reformat your input and try again.");
}

bool contains(std::string_view text, std::string_view part) {
  return text.find(part) != std::string_view::npos;
}

bool one_of(std::int64_t v, std::initializer_list<std::int64_t> allowed) {
  for (std::int64_t a : allowed) {
    if (v == a) {
      return true;
    }
  }
  return false;
}

// An optional integer member that must be one of `allowed`: its value, `fallback` when absent.
Result<std::uint32_t> choice(const json::object& o, std::string_view key,
                             std::initializer_list<std::int64_t> allowed, std::uint32_t fallback) {
  const json::value* v = o.if_contains(key);
  if (v == nullptr) {
    return fallback;
  }
  if (!v->is_int64() || !one_of(v->get_int64(), allowed)) {
    return malformed("#/" + std::string(key) + ": " + json::serialize(*v) +
                     " is not a valid enum value");
  }
  return static_cast<std::uint32_t>(v->get_int64());
}

Result<void> only_members(const json::object& o, std::initializer_list<std::string_view> known) {
  for (const auto& member : o) {
    bool ok = false;
    for (std::string_view k : known) {
      ok = ok || member.key() == k;
    }
    if (!ok) {
      return malformed("#: extraneous key [" + std::string(member.key()) + "] is not permitted");
    }
  }
  return {};
}

void append_vector(codec::JsonWriter& w, const std::vector<float>& v) {
  w.ch('[');
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (i > 0) {
      w.ch(',');
    }
    w.number(static_cast<double>(v[i]));
  }
  w.ch(']');
}

Reply with_token_count(std::string body, std::uint32_t tokens) {
  Reply reply = body_reply(std::move(body));
  reply.extra_headers = "X-Amzn-Bedrock-Input-Token-Count: " + std::to_string(tokens) + "\r\n";
  return reply;
}

Result<Reply> titan(const json::object& o, std::string_view model_id, EmbeddingMode mode) {
  const bool v2 = contains(model_id, "titan-embed-text-v2");
  const bool multimodal = contains(model_id, "titan-embed-image");
  auto known = v2 ? only_members(o, {"inputText", "dimensions", "normalize", "embeddingTypes"})
               : multimodal ? only_members(o, {"inputText", "inputImage", "embeddingConfig"})
                            : only_members(o, {"inputText"});
  if (!known) {
    return known.error();
  }
  const json::value* text = o.if_contains("inputText");
  if (text == nullptr || !text->is_string()) {
    return malformed("#: required key [inputText] not found");
  }
  if (text->get_string().empty()) {
    return malformed("#/inputText: expected minLength: 1, actual: 0");
  }
  std::uint32_t dimensions = v2 ? 1024 : multimodal ? 1024 : 1536;
  if (v2) {
    auto d = choice(o, "dimensions", {256, 512, 1024}, 1024);
    if (!d) {
      return d.error();
    }
    dimensions = *d;
  } else if (const json::value* config = o.if_contains("embeddingConfig")) {
    if (!config->is_object()) {
      return malformed("#/embeddingConfig: expected type: JSONObject");
    }
    auto d = choice(config->get_object(), "outputEmbeddingLength", {256, 384, 1024}, 1024);
    if (!d) {
      return d.error();
    }
    dimensions = *d;
  }
  const std::string_view input(text->get_string().data(), text->get_string().size());
  const std::vector<float> v = embedding_of(text_terms(input, mode), dimensions);
  const std::uint32_t tokens = estimate_tokens(input.size());
  std::string body;
  codec::JsonWriter w(body);
  w.raw(R"({"embedding":)");
  append_vector(w, v);
  w.raw(R"(,"embeddingsByType":{"float":)");
  append_vector(w, v);
  w.raw(R"(},"inputTextTokenCount":)").number(std::uint64_t{tokens}).ch('}');
  return with_token_count(std::move(body), tokens);
}

Result<Reply> cohere(const json::object& o, std::string_view model_id, EmbeddingMode mode) {
  const bool v4 = contains(model_id, "cohere.embed-v4");
  auto known =
      v4 ? only_members(o, {"texts", "images", "input_type", "truncate", "embedding_types",
                            "output_dimension", "max_tokens"})
         : only_members(o, {"texts", "images", "input_type", "truncate", "embedding_types"});
  if (!known) {
    return known.error();
  }
  const json::value* texts = o.if_contains("texts");
  if (texts == nullptr || !texts->is_array()) {
    return malformed("#: required key [texts] not found");
  }
  if (texts->get_array().size() > 96) {
    return malformed("#/texts: expected maxItems: 96, actual: " +
                     std::to_string(texts->get_array().size()));
  }
  const json::value* type = o.if_contains("input_type");
  if (type == nullptr || !type->is_string()) {
    return malformed("#: required key [input_type] not found");
  }
  const std::string_view t(type->get_string().data(), type->get_string().size());
  if (t != "search_document" && t != "search_query" && t != "classification" && t != "clustering" &&
      t != "image") {
    return malformed("#/input_type: " + std::string(t) + " is not a valid enum value");
  }
  std::uint32_t dimensions = 1024;
  if (v4) {
    auto d = choice(o, "output_dimension", {256, 512, 1024, 1536}, 1536);
    if (!d) {
      return d.error();
    }
    dimensions = *d;
  }
  bool by_type = false;
  if (const json::value* types = o.if_contains("embedding_types")) {
    if (!types->is_array() || types->get_array().size() != 1 ||
        types->get_array().front() != "float") {
      return malformed("#/embedding_types: the mock answers [\"float\"] only");
    }
    by_type = true;
  }
  std::uint32_t tokens = 0;
  std::string vectors;
  codec::JsonWriter w(vectors);
  w.ch('[');
  std::string echoed;
  codec::JsonWriter e(echoed);
  e.ch('[');
  bool first = true;
  for (const json::value& item : texts->get_array()) {
    if (!item.is_string()) {
      return malformed("#/texts: expected type: String");
    }
    const std::string_view input(item.get_string().data(), item.get_string().size());
    if (!first) {
      w.ch(',');
      e.ch(',');
    }
    first = false;
    append_vector(w, embedding_of(text_terms(input, mode), dimensions));
    e.string(input);
    tokens += estimate_tokens(input.size());
  }
  w.ch(']');
  e.ch(']');
  std::string body = R"({"embeddings":)";
  body += by_type ? R"({"float":)" + vectors + "}" : vectors;
  body += R"(,"id":"mock-cohere-embed","response_type":)";
  body += by_type ? R"("embeddings_by_type")" : R"("embeddings_floats")";
  body += R"(,"texts":)" + echoed + "}";
  return with_token_count(std::move(body), tokens);
}

}  // namespace

bool is_bedrock_embedding_model(std::string_view model_id) {
  return contains(model_id, "amazon.titan-embed") || contains(model_id, "cohere.embed-");
}

Result<Reply> respond_bedrock_embed(std::string_view body, std::string_view model_id,
                                    EmbeddingMode mode) {
  if (auto ok = check_bedrock_model_id(model_id); !ok) {
    return ok.error();
  }
  boost::system::error_code ec;
  json::value doc = json::parse(body, ec);
  if (ec || !doc.is_object()) {
    return Error(ErrorKind::kBadRequest,
                 "Malformed input request, please reformat your input and try again.");
  }
  if (contains(model_id, "amazon.titan-embed")) {
    return titan(doc.get_object(), model_id, mode);
  }
  return cohere(doc.get_object(), model_id, mode);
}

}  // namespace sluice::mock
