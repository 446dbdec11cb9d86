#pragma once

#include "cache/flight.h"
#include "pipeline/downstream.h"

namespace sluice::pipeline {

class CallContext;

// Answers `call` from a shared call already under way (cache/flight.h) instead of its own:
// a streaming caller gets the events produced so far, then the live ones, each told in its own
// protocol through its own stream encoder and the chain's stream filters; a plain caller gets
// the whole answer once it is complete. x-sluice-cache: coalesced; outcome coalesced, naming
// the target that produced the answer; no usage of its own.
//
// False when the shared call failed before this caller got anything: the caller then makes
// its own attempt. A follower mid-stream when it fails ends with its protocol's error event.
// A follower whose caller leaves just stops; the shared call and the others go on.
Awaitable<bool> follow_flight(CallContext& call, cache::Flight& flight);

}  // namespace sluice::pipeline
