#pragma once

#include <optional>
#include <string>

#include "ir/response.h"
#include "pipeline/downstream.h"

namespace sluice::pipeline {

class CallContext;

// A whole answer the gateway holds (a cached entry, an idempotent replay) told to the caller in
// its own protocol and mode: the body its protocol's encoder writes, or, when it asked for a
// stream, the events a stream of it would have carried (cache/replay.h).

// The bytes: a body or a whole stream. nullopt when the caller's protocol cannot carry this
// answer (nothing was written: the call may still go to the origin).
std::optional<std::string> tell_answer(CallContext& call, const ir::Response& answer);

// Sends what tell_answer made, with `head` (from downstream().new_head(), the caller's fields
// already added): through the chain's response filters, as a plain answer or a stream.
Awaitable<void> send_told_answer(CallContext& call, ResponseHead& head, std::string told);

}  // namespace sluice::pipeline
