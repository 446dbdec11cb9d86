#pragma once

#include <cstdint>
#include <optional>

namespace sluice::ir {

// Token usage of one model call, normalised across protocols. `input_tokens` counts every
// prompt token including cache reads and writes (OpenAI `prompt_tokens` semantics);
// cache and reasoning counts are sub-items of input and output respectively. Protocol
// codecs convert to and from their own conventions (Anthropic's input_tokens excludes
// cache tokens) and refuse conversions that would go negative.
struct Usage {
  std::uint64_t input_tokens = 0;
  std::uint64_t output_tokens = 0;
  std::uint64_t cache_read_tokens = 0;
  std::uint64_t cache_write_tokens = 0;
  std::uint64_t reasoning_tokens = 0;

  bool operator==(const Usage&) const = default;
};

}  // namespace sluice::ir
