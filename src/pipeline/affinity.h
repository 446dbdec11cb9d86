#pragma once

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "core/clock.h"

namespace sluice::pipeline {

// Which provider stored which answer: an upstream that keeps what it answered under an id (an
// OpenAI Responses response) is the only one that can serve a later GET of that id, or continue
// from it (previous_response_id). The pipeline records the id of every such answer it relays
// verbatim (IngressCodec::stored_id_of_body, StreamSniffer::stored_id) with the provider that
// produced it and the gateway key that asked, and a GET of a stored object
// (IngressCodec::match_stored_object) is relayed to that provider for the same key only.
// Continuations use the same record: a request with previous_response_id goes to the provider
// that stored the previous answer and only there (ModelCall::pinned_target); when the record is
// unknown (expired, another instance) the route's plan runs and the upstream answers for itself.
//
// Bounded and thread-safe: one instance for all workers (server::SharedState). Records expire
// after `ttl`; past `capacity` the oldest go first. Ids hash to one of 16 shards, each behind
// its own small mutex held only to look up or insert, so workers rarely contend. Time comes
// from the caller (the pipeline's Clock), so tests drive expiry with SimulatedClock.
class ResponseAffinity {
 public:
  using TimePoint = Clock::Monotonic::time_point;

  struct Options {
    std::chrono::seconds ttl{3600};
    std::size_t capacity = 100'000;  // records across all shards (about 150 bytes each)
  };

  struct Record {
    std::string provider;  // provider id (config)
    std::string owner;     // the gateway key's immutable id (config::Key::id), "" when auth is off
  };

  ResponseAffinity() : ResponseAffinity(Options{}) {}
  explicit ResponseAffinity(Options options);
  ResponseAffinity(const ResponseAffinity&) = delete;
  ResponseAffinity& operator=(const ResponseAffinity&) = delete;

  // Records that `provider` stored `id` for `owner`, valid until now + ttl. A repeated id is
  // refreshed. Empty ids are ignored.
  void remember(std::string_view id, std::string_view provider, std::string_view owner,
                TimePoint now);
  // The record for `id`, unless it is unknown, expired or evicted.
  std::optional<Record> find(std::string_view id, TimePoint now) const;
  // Records held (expired ones not yet evicted included).
  std::size_t size() const;
  const Options& options() const { return options_; }

  static constexpr std::size_t kShards = 16;

 private:
  struct Hash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  struct Entry {
    Record record;
    TimePoint expires;
    std::uint64_t stamp = 0;  // which queue element is this entry's latest
  };
  struct Queued {
    std::string_view id;  // the map node's key: nodes do not move, and only the entry's latest
                          // queue element erases it, after every older one has left the queue
    std::uint64_t stamp = 0;
    TimePoint expires;
  };
  struct Shard {
    mutable std::mutex mu;
    std::unordered_map<std::string, Entry, Hash, std::equal_to<>> entries;
    std::deque<Queued> order;  // insertion order = expiry order (one ttl for all)
    std::uint64_t next_stamp = 0;
  };

  Shard& shard_for(std::string_view id) const;
  // Drops expired records from the front of the queue, then the oldest while over capacity.
  void evict(Shard& shard, TimePoint now) const;

  Options options_;
  std::size_t per_shard_;
  mutable std::array<Shard, kShards> shards_;
};

}  // namespace sluice::pipeline
