#pragma once

#include <cstdint>

#include "ir/request.h"

namespace sluice::ir {

// A prompt's tokens estimated without the model's tokenizer (the gateway has none): about four
// bytes of text per token (the usual figure for English under BPE tokenizers; code and other
// scripts run denser, so this tends to undercount them), plus a fixed cost per message, per tool
// definition and per image. Images count 1,600 tokens each: what Anthropic bills for the largest
// image it accepts without resizing, so the estimate errs high for images rather than low.
// Used where a protocol must state a count before, or without, the upstream's: Anthropic
// count_tokens towards upstreams with no counting endpoint. Never 0 for a request with content.
std::uint64_t estimate_input_tokens(const Request& request);

}  // namespace sluice::ir
