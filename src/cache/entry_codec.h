#pragma once

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "cache/entry.h"

namespace sluice::cache {

// An entry as bytes, for a store shared by every instance (the Redis tier): the answer's IR
// and the entry's metadata, versioned, in a length-prefixed binary layout, deflated when it is
// larger than `compress_above` bytes. Times travel as wall-clock instants (each instance has
// its own steady clock) and come back as steady ones on the reader's clock.
//
// The record says nothing the in-process entry does not: no key, no header, no credential.
struct EntryClocks {
  std::chrono::system_clock::time_point wall_now;
  std::chrono::steady_clock::time_point steady_now;
};

// The record of `entry`, or nullopt when its answer holds what the layout does not carry
// (images or tool results in an answer: never produced by a model, so never cached).
std::optional<std::string> encode_entry(const Entry& entry, const EntryClocks& now,
                                        std::size_t compress_above);

// The entry of `record`, or nullopt when it is not one this version wrote (another version,
// cut short, corrupt, or larger than `max_bytes` once inflated). Never trusts a length.
std::optional<Entry> decode_entry(std::string_view record, const EntryClocks& now,
                                  std::size_t max_bytes);

}  // namespace sluice::cache
