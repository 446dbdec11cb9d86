#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "reply.h"

namespace sluice::mock {

// What the mock takes from a POST /embeddings body.
struct EmbeddingsRequest {
  std::string model;
  // One hash per input (string, or token array); the vector is derived from it.
  std::vector<std::uint64_t> input_hashes;
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
Result<EmbeddingsRequest> parse_embeddings_request(std::string_view body);

// The unit-length float32 vector for one input hash; same hash, same vector.
std::vector<float> embedding_for(std::uint64_t hash, std::uint32_t dimensions);

// The {"object":"list","data":[...],"model":..,"usage":{..}} body. base64 vectors are the
// little-endian float32 bytes, base64-encoded, as OpenAI sends them.
std::string embeddings_body(const EmbeddingsRequest& request);

// POST …/embeddings: the embeddings body, or a validation error.
Result<Reply> respond_embeddings(std::string_view body);

}  // namespace sluice::mock
