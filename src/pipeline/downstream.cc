#include "pipeline/downstream.h"

#include <charconv>

namespace sluice::pipeline {

std::string_view ResponseHead::number(std::uint64_t value) {
  if (numbers_used_ == numbers_.size()) {
    return "0";  // a head never needs this many numbers; bounded, never overflowing
  }
  std::array<char, 24>& slot = numbers_[numbers_used_++];
  auto r = std::to_chars(slot.data(), slot.data() + slot.size(), value);
  return {slot.data(), static_cast<std::size_t>(r.ptr - slot.data())};
}

}  // namespace sluice::pipeline
