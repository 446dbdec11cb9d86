#include "embeddings_responder.h"

#include <bit>
#include <cmath>
#include <cstring>
#include <iterator>

#include <boost/json.hpp>
#include <fmt/format.h>

#include "json_text.h"
#include "reply_content.h"
#include "request_body.h"

namespace sluice::mock {
namespace {

namespace json = boost::json;

constexpr std::uint64_t kFnvOffset = 0xcbf29ce484222325ull;
constexpr std::uint64_t kFnvPrime = 0x100000001b3ull;

std::uint64_t fnv1a(std::uint64_t h, const void* data, std::size_t n) {
  const auto* p = static_cast<const unsigned char*>(data);
  for (std::size_t i = 0; i < n; ++i) {
    h ^= p[i];
    h *= kFnvPrime;
  }
  return h;
}

std::uint64_t splitmix64(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// Token arrays hash under a different seed than strings so that "[1,2]" as text and
// [1,2] as tokens do not collide.
const std::uint64_t kTokensSeed = fnv1a(kFnvOffset, "tokens", 6);

std::uint64_t fold_token(std::uint64_t h, std::int64_t v) {
  unsigned char bytes[8];
  for (int i = 0; i < 8; ++i) {
    bytes[i] = static_cast<unsigned char>(static_cast<std::uint64_t>(v) >> (8 * i));
  }
  return fnv1a(h, bytes, sizeof bytes);
}

// The hashes a token array's vector sums: one of the whole array (kHash), or one per id.
Result<std::vector<std::uint64_t>> token_terms(const json::array& tokens, EmbeddingMode mode) {
  std::vector<std::uint64_t> terms;
  std::uint64_t whole = kTokensSeed;
  for (const auto& t : tokens) {
    if (!t.is_int64() && !t.is_uint64()) {
      return bad_request("Invalid 'input': token arrays must contain integers.", "input");
    }
    const std::int64_t v = t.is_int64() ? t.get_int64() : static_cast<std::int64_t>(t.get_uint64());
    if (mode == EmbeddingMode::kHash) {
      whole = fold_token(whole, v);
    } else {
      terms.push_back(fold_token(kTokensSeed, v));
    }
  }
  if (mode == EmbeddingMode::kHash) {
    terms.push_back(whole);
  }
  return terms;
}

bool word_byte(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c > 0x7f;
}

std::uint32_t string_tokens(std::size_t chars) { return estimate_tokens(chars); }

}  // namespace

std::vector<std::uint64_t> text_terms(std::string_view text, EmbeddingMode mode) {
  std::vector<std::uint64_t> terms;
  if (mode == EmbeddingMode::kBagOfWords) {
    std::string word;
    const auto end_word = [&] {
      if (!word.empty()) {
        terms.push_back(fnv1a(kFnvOffset, word.data(), word.size()));
        word.clear();
      }
    };
    for (const char ch : text) {
      const auto c = static_cast<unsigned char>(ch);
      if (!word_byte(c)) {
        end_word();
      } else {
        word.push_back(c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : ch);
      }
    }
    end_word();
  }
  if (terms.empty()) {  // kHash, or no words at all: the whole text stands for itself
    terms.push_back(fnv1a(kFnvOffset, text.data(), text.size()));
  }
  return terms;
}

Result<EmbeddingsRequest> parse_embeddings_request(std::string_view body, EmbeddingMode mode) {
  // Small requests parse without touching the heap; large ones spill over transparently.
  unsigned char scratch[4096];
  json::monotonic_resource mr(scratch, sizeof scratch);
  auto root = parse_request_object(body, mr, json::parse_options{}.max_depth);
  if (!root) {
    return root.error();
  }
  const json::object* obj = &root->get_object();
  EmbeddingsRequest out;
  auto model = read_model(*obj);
  if (!model) {
    return model.error();
  }
  out.model = std::move(*model);

  const auto* input = obj->if_contains("input");
  if (!input) {
    return bad_request("Missing required parameter: 'input'.", "input");
  }
  if (const auto* s = input->if_string()) {
    out.inputs.push_back(text_terms(*s, mode));
    out.prompt_tokens = string_tokens(s->size());
  } else if (const auto* arr = input->if_array()) {
    if (arr->empty()) {
      return bad_request("'input' cannot be an empty array.", "input");
    }
    const auto& first = arr->front();
    if (first.is_int64() || first.is_uint64()) {
      auto terms = token_terms(*arr, mode);
      if (!terms) {
        return terms.error();
      }
      out.inputs.push_back(std::move(*terms));
      out.prompt_tokens = static_cast<std::uint32_t>(arr->size());
    } else {
      out.inputs.reserve(arr->size());
      for (const auto& item : *arr) {
        if (const auto* s = item.if_string()) {
          out.inputs.push_back(text_terms(*s, mode));
          out.prompt_tokens += string_tokens(s->size());
        } else if (const auto* tokens = item.if_array()) {
          auto terms = token_terms(*tokens, mode);
          if (!terms) {
            return terms.error();
          }
          out.inputs.push_back(std::move(*terms));
          out.prompt_tokens += static_cast<std::uint32_t>(tokens->size());
        } else {
          return bad_request(
              "Invalid 'input': expected a string, an array of strings, or token arrays.", "input");
        }
      }
    }
  } else {
    return bad_request("Invalid 'input': expected a string, an array of strings, or token arrays.",
                       "input");
  }

  if (const auto* dims = obj->if_contains("dimensions"); dims && !dims->is_null()) {
    std::int64_t d = 0;
    if (dims->is_int64()) {
      d = dims->get_int64();
    } else if (dims->is_uint64()) {
      d = dims->get_uint64() > kMaxDimensions ? kMaxDimensions + 1 : dims->get_uint64();
    } else {
      return bad_request("Invalid type for 'dimensions': expected an integer.", "dimensions");
    }
    if (d < 1) {
      return bad_request(std::to_string(d) + " is less than the minimum of 1 - 'dimensions'",
                         "dimensions");
    }
    if (d > kMaxDimensions) {
      return bad_request(
          "'dimensions' is larger than the mock's maximum of " + std::to_string(kMaxDimensions),
          "dimensions");
    }
    out.dimensions = static_cast<std::uint32_t>(d);
  }
  if (std::uint64_t{out.dimensions} * out.inputs.size() > kMaxTotalFloats) {
    return bad_request("Too many inputs x dimensions for the mock.", "input");
  }

  if (const auto* fmt = obj->if_contains("encoding_format"); fmt && !fmt->is_null()) {
    if (fmt->is_string() && fmt->get_string() == "float") {
      out.base64 = false;
    } else if (fmt->is_string() && fmt->get_string() == "base64") {
      out.base64 = true;
    } else {
      return bad_request("Invalid value for 'encoding_format': expected 'float' or 'base64'.",
                         "encoding_format");
    }
  }
  return out;
}

std::vector<float> embedding_for(std::uint64_t hash, std::uint32_t dimensions) {
  std::vector<float> v(dimensions);
  std::uint64_t state = hash;
  double norm = 0;
  for (auto& x : v) {
    double u = static_cast<double>(splitmix64(state) >> 11) * 0x1.0p-53;
    x = static_cast<float>(u * 2.0 - 1.0);
    norm += static_cast<double>(x) * x;
  }
  norm = std::sqrt(norm);
  if (norm > 0) {
    for (auto& x : v) {
      x = static_cast<float>(x / norm);
    }
  }
  return v;
}

std::vector<float> embedding_of(std::span<const std::uint64_t> hashes, std::uint32_t dimensions) {
  if (hashes.size() == 1) {
    return embedding_for(hashes.front(), dimensions);
  }
  std::vector<double> sum(dimensions, 0.0);
  for (const std::uint64_t h : hashes) {
    const std::vector<float> term = embedding_for(h, dimensions);
    for (std::uint32_t k = 0; k < dimensions; ++k) {
      sum[k] += term[k];
    }
  }
  double norm = 0;
  for (const double x : sum) {
    norm += x * x;
  }
  norm = std::sqrt(norm);
  std::vector<float> v(dimensions);
  for (std::uint32_t k = 0; k < dimensions; ++k) {
    v[k] = static_cast<float>(norm > 0 ? sum[k] / norm : 0.0);
  }
  return v;
}

std::string embeddings_body(const EmbeddingsRequest& request) {
  std::string out = R"({"object":"list","data":[)";
  std::vector<std::uint8_t> bytes;
  for (std::size_t i = 0; i < request.inputs.size(); ++i) {
    if (i > 0) {
      out.push_back(',');
    }
    out += R"({"object":"embedding","index":)";
    out += std::to_string(i);
    out += R"(,"embedding":)";
    std::vector<float> v = embedding_of(request.inputs[i], request.dimensions);
    if (request.base64) {
      bytes.resize(v.size() * 4);
      for (std::size_t k = 0; k < v.size(); ++k) {
        auto bits = std::bit_cast<std::uint32_t>(v[k]);
        for (int b = 0; b < 4; ++b) {
          bytes[k * 4 + b] = static_cast<std::uint8_t>(bits >> (8 * b));
        }
      }
      out.push_back('"');
      append_base64(out, bytes.data(), bytes.size());
      out.push_back('"');
    } else {
      out.push_back('[');
      for (std::size_t k = 0; k < v.size(); ++k) {
        if (k > 0) {
          out.push_back(',');
        }
        fmt::format_to(std::back_inserter(out), "{}", v[k]);
      }
      out.push_back(']');
    }
    out.push_back('}');
  }
  out += R"(],"model":)";
  append_json_string(out, request.model);
  out += R"(,"usage":{"prompt_tokens":)";
  out += std::to_string(request.prompt_tokens);
  out += R"(,"total_tokens":)";
  out += std::to_string(request.prompt_tokens);
  out += "}}";
  return out;
}

Result<Reply> respond_embeddings(std::string_view body, EmbeddingMode mode) {
  auto emb = parse_embeddings_request(body, mode);
  if (!emb) {
    return emb.error();
  }
  return body_reply(embeddings_body(*emb));
}

}  // namespace sluice::mock
