#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "reply.h"

namespace sluice::mock {

// How an input becomes its vector. kHash: one pseudo-random unit vector per distinct input, so
// any two different texts are far apart, however alike. kBagOfWords: the normalised sum of one
// such vector per word (lower-cased runs of ASCII letters and digits, bytes above 0x7f counting
// as letters) or per token id, so texts that share most of their words are close: what a test
// of a semantic cache needs for hits and near-misses.
enum class EmbeddingMode { kHash, kBagOfWords };

// What the mock takes from a POST /embeddings body.
struct EmbeddingsRequest {
  std::string model;
  // Per input (string, or token array), the hashes its vector sums: one of the whole input
  // (kHash) or one per word or token (kBagOfWords).
  std::vector<std::vector<std::uint64_t>> inputs;
  std::uint32_t dimensions = 8;
  bool base64 = false;
  // Strings count characters / 4 + 1 tokens each; token arrays count their length.
  std::uint32_t prompt_tokens = 0;
};

// Largest accepted "dimensions" and total number of floats in one response.
inline constexpr std::uint32_t kMaxDimensions = 16384;
inline constexpr std::uint64_t kMaxTotalFloats = 8u << 20;

// Parses and validates an embeddings body: "model" (string), "input" (string, array of
// strings, array of token ids, or array of token arrays; non-empty), "dimensions" (1..
// kMaxDimensions, default 8), "encoding_format" ("float" default, or "base64").
Result<EmbeddingsRequest> parse_embeddings_request(std::string_view body,
                                                   EmbeddingMode mode = EmbeddingMode::kHash);

// The hashes an input text's vector sums: one of the whole text (kHash), or one per word.
std::vector<std::uint64_t> text_terms(std::string_view text, EmbeddingMode mode);

// The unit-length float32 vector for one input hash; same hash, same vector.
std::vector<float> embedding_for(std::uint64_t hash, std::uint32_t dimensions);

// The unit-length vector of an input: embedding_for its one hash, or the normalised sum of
// embedding_for each of its hashes.
std::vector<float> embedding_of(std::span<const std::uint64_t> hashes, std::uint32_t dimensions);

// The {"object":"list","data":[...],"model":..,"usage":{..}} body. base64 vectors are the
// little-endian float32 bytes, base64-encoded, as OpenAI sends them.
std::string embeddings_body(const EmbeddingsRequest& request);

// POST …/embeddings: the embeddings body, or a validation error.
Result<Reply> respond_embeddings(std::string_view body, EmbeddingMode mode = EmbeddingMode::kHash);

}  // namespace sluice::mock
