#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "cache/flight.h"
#include "cache/key.h"
#include "cache/shared_store.h"
#include "pipeline/downstream.h"

namespace sluice::pipeline {

class CallContext;

// What a miss found when it asked whether another instance is making the same call
// (docs/cache.md#redis).
struct SharedFlightWait {
  enum class Result : std::uint8_t {
    kLead,       // this instance makes the call
    kAnswered,   // another instance's call answered: `record` (cache/entry_codec.h)
    kElsewhere,  // another instance's call is under way: follow it (relay_shared_flight)
  };
  Result result = Result::kLead;
  // kLead: this instance holds the call's claim (others wait for it); release it when the call
  // is over. False when no instance could be asked.
  bool claimed = false;
  std::string record;
};

// Single-flight across instances, one round trip: claims the call for this instance (for
// `hold`), or finds its answer already stored, or finds another instance's call under way. A
// store that does not answer means each instance on its own: kLead, unclaimed.
Awaitable<SharedFlightWait> claim_shared_flight(cache::SharedStore& store, std::string_view alias,
                                                std::string_view tenant, const cache::Key& key,
                                                std::chrono::milliseconds hold);

// A waiter's side of a call another instance makes: that call's live log (cache/live_record.h)
// read into `flight`, which this instance's requests follow as they would a local call (their
// streams get the events so far, then the live ones). Polls every 10 ms while the log has
// nothing new, every 50 ms after a quiet second. Ends when the log does, or failed when the
// claim is gone without the log's end (the holder's instance died), the store stops
// answering, `wait` has passed, or no request of this instance follows any more; then, when
// the store holds the call's answer by then, `adopt` is given its record before the flight
// fails (a follower falling back finds it). The flight lands in `flights` either way.
struct SharedFlightRelay {
  cache::SharedStore& store;
  std::string_view alias;
  std::string_view tenant;
  cache::Key key;
  std::chrono::milliseconds wait;
  std::size_t max_record_bytes;
  std::function<void(std::string_view record)> adopt;
};
Awaitable<void> relay_shared_flight(SharedFlightRelay relay, std::shared_ptr<cache::Flight> flight,
                                    cache::Flights& flights);

}  // namespace sluice::pipeline
