#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ir/stream_event.h"
#include "ir/usage.h"

namespace sluice::cache {

// A shared call's answer as it is produced, for waiters on other instances
// (docs/cache.md#redis): the instance whose call holds the claim appends one record per batch
// of events its followers are published (cache/flight.h), then one that says how the call
// ended; a waiter elsewhere reads them in order into a flight of its own, which its callers
// follow as they would a local call. Each record carries the target answering and the usage
// known when it was written, as Flight::set_origin does.
//
// Like entry_codec.h: versioned, length-prefixed binary, nothing the flight does not hold (no
// key, no header, no credential).
struct LiveRecord {
  enum class Kind : std::uint8_t {
    kEvents,  // `events`, in order
    kEnd,     // the call is over: `whole` when its answer was published whole
  };
  Kind kind = Kind::kEvents;
  std::vector<ir::StreamEvent> events;
  bool whole = false;
  std::string provider;
  std::string model;
  std::optional<ir::Usage> usage;
};

std::string encode_live_events(std::span<const ir::StreamEvent> events, std::string_view provider,
                               std::string_view model, const std::optional<ir::Usage>& usage);
std::string encode_live_end(bool whole, std::string_view provider, std::string_view model,
                            const std::optional<ir::Usage>& usage);

// The record of `bytes`, or nullopt when it is not one this version wrote (cut short, corrupt,
// an event kind it does not know) or larger than `max_bytes`.
std::optional<LiveRecord> decode_live(std::string_view bytes, std::size_t max_bytes);

}  // namespace sluice::cache
