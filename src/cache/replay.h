#pragma once

#include <vector>

#include "ir/response.h"
#include "ir/stream_event.h"

namespace sluice::cache {

// A cached answer as the stream events that tell it (the order ir/stream_event.h promises):
// kStart, each content part in order (a text or reasoning part as one delta, its signature
// after it; a tool call as its start and one arguments delta), the usage, kFinish, kDone. A
// protocol's StreamEncoder turns them into that protocol's stream, so one entry answers a
// streaming caller of any protocol; IngressCodec::encode_response answers the others.
std::vector<ir::StreamEvent> replay_events(const ir::Response& answer);

}  // namespace sluice::cache
