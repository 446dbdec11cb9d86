#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "cache/key.h"

namespace sluice::cache {

// One semantic-cache vector as the instances share it (SharedStore::append_vector): the key of
// the answer it leads to, then its floats. Bytes: the 32-byte key, then each float as its
// IEEE-754 bits, little-endian, so instances of any byte order read each other's records.
struct VectorRecord {
  Key answer{};
  std::vector<float> unit;  // unit length (SemanticIndex::normalize)
};

// The most dimensions a record may hold: larger than any embedding model's (3,072 is the
// largest OpenAI's), small enough that a bad record cannot cost much to read.
inline constexpr std::size_t kMaxVectorDimensions = 16384;

std::string encode_vector_record(const Key& answer, std::span<const float> unit);
// The record in `bytes`, normalised again; nullopt when it is not one (another length, a
// float that is not finite, all zeros): a store's bytes are not trusted to be ours.
std::optional<VectorRecord> decode_vector_record(std::string_view bytes);

}  // namespace sluice::cache
