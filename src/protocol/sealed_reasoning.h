#pragma once

#include <string_view>

namespace sluice::protocol {

// What every reasoning state the gateway sealed for a caller starts with (pipeline/
// reasoning_seal.h seals and opens them; a codec only needs to recognise them). No base64
// alphabet has ':', so no upstream's own opaque value (OpenAI's encrypted_content, a Claude
// signature) looks like one.
inline constexpr std::string_view kSealedReasoningPrefix = "sluice:r1:";

}  // namespace sluice::protocol
