#include "cache/vector_record.h"

#include <bit>
#include <cstdint>
#include <cstring>

#include "cache/semantic_index.h"

namespace sluice::cache {

std::string encode_vector_record(const Key& answer, std::span<const float> unit) {
  std::string out;
  out.reserve(answer.size() + unit.size() * 4);
  out.append(reinterpret_cast<const char*>(answer.data()), answer.size());
  for (const float x : unit) {
    const auto bits = std::bit_cast<std::uint32_t>(x);
    for (int shift = 0; shift < 32; shift += 8) {
      out.push_back(static_cast<char>((bits >> shift) & 0xff));
    }
  }
  return out;
}

std::optional<VectorRecord> decode_vector_record(std::string_view bytes) {
  VectorRecord record;
  if (bytes.size() <= record.answer.size()) {
    return std::nullopt;
  }
  const std::size_t floats = bytes.size() - record.answer.size();
  if (floats % 4 != 0 || floats / 4 > kMaxVectorDimensions) {
    return std::nullopt;
  }
  std::memcpy(record.answer.data(), bytes.data(), record.answer.size());
  record.unit.reserve(floats / 4);
  for (std::size_t at = record.answer.size(); at < bytes.size(); at += 4) {
    std::uint32_t bits = 0;
    for (int i = 0; i < 4; ++i) {
      bits |= std::uint32_t{static_cast<unsigned char>(bytes[at + i])} << (8 * i);
    }
    record.unit.push_back(std::bit_cast<float>(bits));
  }
  if (!SemanticIndex::normalize(record.unit)) {
    return std::nullopt;
  }
  return record;
}

}  // namespace sluice::cache
