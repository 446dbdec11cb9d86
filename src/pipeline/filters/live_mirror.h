#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "cache/key.h"
#include "cache/shared_store.h"
#include "ir/stream_event.h"
#include "ir/usage.h"

namespace sluice::pipeline {

// The leading side of a call shared across instances (docs/cache.md#redis): what the call's
// followers are published goes to its live log in the shared store too (cache/live_record.h),
// so that waiters on other instances follow it as it comes, then how it ended. Bounded like the
// flight: past `max_bytes` the log ends as failed, and its waiters make their own calls.
// Nothing is awaited. Lives with the call's AnswerKeeper, on its worker.
//
// Each append's answer says whether a waiter elsewhere still follows the call (its reads set a
// watch in the store, for SharedStore::kLiveWatch): while one does, the call goes on when its
// own caller leaves, as it does for a local follower (AnswerKeeper's hold on the caller). Known
// from the last append's answer: before the first one, only local followers count.
class LiveMirror {
 public:
  LiveMirror(cache::SharedStore& store, std::string_view alias, std::string_view tenant,
             const cache::Key& key, std::chrono::milliseconds ttl, std::size_t max_bytes)
      : store_(store),
        alias_(alias),
        tenant_(tenant),
        key_(key),
        ttl_(ttl),
        max_bytes_(max_bytes) {}
  LiveMirror(const LiveMirror&) = delete;
  LiveMirror& operator=(const LiveMirror&) = delete;

  // `events` as the flight got them, with the target answering and the usage so far.
  void events(std::span<const ir::StreamEvent> events, std::string_view provider,
              std::string_view model, const std::optional<ir::Usage>& usage);
  // Until when a waiter elsewhere is known to follow the call. Outlives the mirror (the
  // store's answers may come after it is gone).
  struct Watch {
    std::chrono::steady_clock::time_point until{};
  };
  std::shared_ptr<const Watch> watch() const { return watch_; }
  // The call is over (once; later calls do nothing).
  void end(bool whole, std::string_view provider, std::string_view model,
           const std::optional<ir::Usage>& usage);

 private:
  cache::SharedStore& store_;
  const std::string alias_;
  const std::string tenant_;
  const cache::Key key_;
  const std::chrono::milliseconds ttl_;
  const std::size_t max_bytes_;
  std::size_t bytes_ = 0;
  std::shared_ptr<Watch> watch_ = std::make_shared<Watch>();
  bool ended_ = false;
};

}  // namespace sluice::pipeline
