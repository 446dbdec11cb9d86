#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "cache/key.h"
#include "ir/stream_event.h"
#include "ir/usage.h"

namespace sluice::cache {

// One upstream call shared by identical requests that arrived while it was under way
// (single-flight): the leader's answer as IR events, in order, as they are produced, so that
// each follower tells it in its own caller's protocol, from the first event, then live.
// Followers run on any worker; every method is thread-safe.
class Flight {
 public:
  enum class State : std::uint8_t {
    kLive,    // the leader's answer is still coming
    kDone,    // the whole answer was published
    kFailed,  // the shared call failed, or its answer outgrew the buffer: no more will come
  };

  // `max_bytes`: what the flight buffers for its followers (the text of the events); past it
  // the flight fails, so a follower never holds more than an entry may.
  // `digest`: the leader's request, for flights keyed by an Idempotency-Key (a request under
  // the same key that is not the same request must not join).
  explicit Flight(std::size_t max_bytes, const Key& digest = {})
      : max_bytes_(max_bytes), digest_(digest) {}
  const Key& digest() const { return digest_; }

  // Who answered the shared call and what it cost upstream, as far as known: a follower's
  // record names the one and counts the other as saved. Immutable once made (a newer one
  // replaces it), so a follower's views into the one it holds stay valid.
  struct Origin {
    std::string provider;
    std::string model;
    std::optional<ir::Usage> usage;
  };

  // The leader's side. Each wakes every waiting follower.
  void publish(std::span<const ir::StreamEvent> events);
  // The target that is answering and the upstream's usage so far, set before the events that
  // follow are published: a follower that has told the whole answer (its encoder saw the end)
  // may finish before the leader's call does, and must still name them.
  void set_origin(std::string_view provider, std::string_view model,
                  const std::optional<ir::Usage>& usage);
  // The leader's call is over: kDone when its whole answer was published, else kFailed.
  // `provider`/`model`: the target that produced it, `usage` what it cost upstream (followers'
  // records name the one and count the other as saved).
  void finish(bool whole, std::string provider, std::string model,
              std::optional<ir::Usage> usage = std::nullopt);

  // A follower's side. Copies the events after `cursor` into `out` and moves the cursor; the
  // state at that point.
  State read(std::size_t& cursor, std::vector<ir::StreamEvent>& out) const;
  // Registers `wake` to be called once, from whichever thread publishes or finishes next;
  // false (and `wake` dropped) when events after `cursor` or the end are there already. A
  // follower (`who`) is registered once however often it asks: one that wakes on its own
  // timeout and asks again while the leader is quiet does not pile up wakers.
  bool wait(std::size_t cursor, const void* who, std::function<void()> wake);
  // Followers register, so the leader knows its answer is wanted beyond its own caller.
  void join() { followers_.fetch_add(1, std::memory_order_relaxed); }
  void leave() { followers_.fetch_sub(1, std::memory_order_relaxed); }
  bool followed() const { return followers_.load(std::memory_order_relaxed) > 0; }

  // The origin as last set (null before the leader's call answered).
  std::shared_ptr<const Origin> origin() const;

 private:
  void wake_all(std::unique_lock<std::mutex>& lock);

  const std::size_t max_bytes_;
  const Key digest_;
  mutable std::mutex mu_;
  std::vector<ir::StreamEvent> events_;
  std::size_t bytes_ = 0;
  State state_ = State::kLive;
  std::vector<std::pair<const void*, std::function<void()>>> wakers_;
  std::atomic<int> followers_{0};
  std::shared_ptr<const Origin> origin_;
};

// The flights in the air, by key: the first miss of a key leads, identical requests arriving
// before it lands follow. Process-wide; 16 shards, each a mutex over a map lookup.
class Flights {
 public:
  struct Boarding {
    std::shared_ptr<Flight> flight;
    bool leader = false;
  };
  // Joins the flight of `key` as a follower, or starts one led by the caller.
  Boarding board(const Key& key, std::size_t max_bytes, const Key& digest = {});
  // The leader's call is over: `flight` leaves the map (later requests read the stored entry
  // or start their own). Only the flight that is there under `key` is removed.
  void land(const Key& key, const Flight& flight);
  std::size_t in_air() const;

 private:
  static constexpr std::size_t kShards = 16;
  struct KeyHash {
    std::size_t operator()(const Key& key) const;
  };
  struct Shard {
    mutable std::mutex mu;
    std::unordered_map<Key, std::shared_ptr<Flight>, KeyHash> flights;
  };
  std::array<Shard, kShards> shards_;
};

}  // namespace sluice::cache
