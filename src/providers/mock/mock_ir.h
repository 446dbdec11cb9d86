#pragma once

#include <string>
#include <vector>

#include "ir/request.h"
#include "ir/response.h"
#include "ir/stream_event.h"

namespace sluice::providers {

// The mock provider's answer at the IR level, for mock providers that speak a protocol other
// than OpenAI's (option mock.protocol): the same deterministic text as mock_chat ("Hello from
// the Sluice mock provider. You said: <last user text>"), usage estimated at 4 bytes per token.
// The protocol's own encoders turn it into that protocol's bytes.
ir::Response mock_ir_response(const ir::Request& request, std::string_view model);

// The same answer as a stream: kStart, one kTextDelta per word, kUsage, kFinish, kDone.
std::vector<ir::StreamEvent> mock_ir_stream(const ir::Response& response);

}  // namespace sluice::providers
