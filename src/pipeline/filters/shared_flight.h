#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

#include "cache/key.h"
#include "cache/shared_store.h"
#include "pipeline/downstream.h"

namespace sluice::pipeline {

class CallContext;

// What a miss found when it asked whether another instance is making the same call
// (docs/cache.md#redis).
struct SharedFlightWait {
  enum class Result : std::uint8_t {
    kLead,        // this instance makes the call
    kAnswered,    // another instance's call answered: `record` (cache/entry_codec.h)
    kCallerGone,  // the caller left while it waited
  };
  Result result = Result::kLead;
  // kLead: this instance holds the call's claim (others wait for it); release it when the call
  // is over. False when no instance could be asked, or one waited long enough.
  bool claimed = false;
  std::string record;
};

// Single-flight across instances: claims the call for this instance, or, while another instance
// holds it, waits for that call's answer to reach the shared store, for at most `wait` (the
// claim lasts as long). A claim that goes without an answer (the call failed, or its instance
// died and the claim lapsed) is taken over at once. A store that does not answer means each
// instance on its own: kLead, unclaimed. Polls, at most every 200 ms (the first after 10 ms),
// one round trip each.
Awaitable<SharedFlightWait> wait_for_shared_flight(CallContext& call, cache::SharedStore& store,
                                                   std::string_view alias, std::string_view tenant,
                                                   const cache::Key& key,
                                                   std::chrono::milliseconds wait);

}  // namespace sluice::pipeline
