#pragma once

#include <memory>
#include <string>

#include <boost/asio/any_io_executor.hpp>

#include "cache/cache_state.h"
#include "cache/flight.h"
#include "cache/shared_store.h"
#include "config/cache.h"
#include "pipeline/filter.h"
#include "pipeline/filter_chain.h"
#include "pipeline/filters/semantic_lookup.h"
#include "protocol/upstream.h"

namespace sluice::pipeline {

// The response cache of a route (docs/cache.md), in the chain of routes whose `cache:` is on.
//
// Before the plan (after rate limits: a hit still counts as a request, but reserves no
// tokens), the request's key is computed from its IR within the route and the caller's tenant
// (cache/key.h), so the same question in any caller protocol is one entry. A fresh entry, or
// a stale one while another request refreshes it, answers the call in the caller's protocol
// and mode (a stream when it asked for one) and the attempt loop never runs: outcome
// cache_hit, no upstream usage. Otherwise the call goes on, and what the caller is sent is
// read back into IR (cache/capture.h) and stored when the call completes.
//
// Single-flight: a miss while an identical call is already under way (same key, any worker)
// makes no call of its own. It follows that call (cache/flight.h): a streaming follower gets
// the events produced so far, then the live ones, each told in its own caller's protocol; a
// plain one gets the whole answer when it is complete (x-sluice-cache: coalesced, outcome
// coalesced, billed at zero). The leader's call goes on when its own caller leaves while
// followers wait (CallContext::hold_caller); a follower leaving changes nothing for the rest.
// If the shared call fails, a follower that has written nothing yet makes its own attempt; one
// that is mid-stream ends with its protocol's error event, as it would had its own upstream
// broken there.
//
// Never cached: a request with `Cache-Control: no-store`, one that continues a stored answer
// (Responses previous_response_id), one with fields the IR cannot carry (a different value of
// them would get the same answer), an error or any answer but a 200, a stream that broke, an
// answer cut by the caller leaving, a truncated answer (unless store_truncated), an answer
// larger than max_entry_bytes. `Cache-Control: no-cache` (or max-age=0) skips the lookup and
// stores the fresh answer; `x-sluice-cache-ttl: <seconds>` shortens the entry's life.
// With `cache.redis`, a local miss asks the store every instance shares before it goes on
// (cache/shared_store.h), and every stored answer is written there too; a Redis that is slow or
// down is a miss, never an error. A leader of a new flight also claims its key there
// (pipeline/filters/shared_flight.h): while another instance holds it, the miss follows that
// call's answer as it comes, through the call's live log (x-sluice-cache: coalesced), instead
// of paying for it again.
// Semantic cache (cache.semantic): a miss that leads a new flight and whose last message is
// the caller's text embeds it (SemanticLookup) and is answered by the nearest question already
// answered in its bucket, if that is at least `threshold` alike (x-sluice-cache: semantic,
// x-sluice-cache-similarity); its answer's vector is kept when it is stored.
// Response header `x-sluice-cache`: hit, semantic, stale, miss, refresh or bypass; `Age` on
// hits.
class CacheFilter final : public Filter {
 public:
  static std::unique_ptr<Filter> make(const FilterSetup& setup);
  // The instances' shared store (null: none) and the size above which records are deflated.
  struct Shared {
    cache::SharedStore* store = nullptr;
    std::uint64_t compress_above_bytes = 0;
  };
  CacheFilter(config::CacheSettings settings, cache::CacheState& cache, Shared shared,
              std::string alias, std::string route_scope, const protocol::UpstreamCodec& codec,
              std::unique_ptr<SemanticLookup> semantic = nullptr);

  std::string_view name() const override { return "cache"; }
  FilterHooks hooks() const override {
    return {FilterHook::kBeforePlan, FilterHook::kResponseHead, FilterHook::kResponseBody,
            FilterHook::kStreamData, FilterHook::kEnd};
  }
  Awaitable<FilterStatus> before_plan(CallContext& call) override;
  FilterStatus on_response_head(CallContext& call, ResponseHead& head) override;
  FilterStatus on_response_body(CallContext& call, std::string& body) override;
  FilterStatus on_stream_data(CallContext& call, std::string& data) override;
  void on_end(CallContext& call) override;

  struct Directives;

 private:
  struct Call;
  // The request's key and state, or null when the request is not cached (ctx.cache says
  // bypass then).
  Call* keyed(CallContext& call, const Directives& directives);
  // The answer under `key` (this request's, or a semantic neighbour's) in the shared store.
  Awaitable<std::optional<cache::MemoryStore::Found>> find_shared(CallContext& call,
                                                                  const Call& state,
                                                                  const cache::Key& key);
  // A record of the shared store, kept here too under `key` when it is a fresh answer of this
  // request's route and tenant.
  std::optional<cache::MemoryStore::Found> adopt_shared(CallContext& call, const Call& state,
                                                        const cache::Key& key,
                                                        std::string_view record);
  Awaitable<FilterStatus> board(CallContext& call, Call& state);
  // A follower of `flight`; then its place in the flight is given up.
  Awaitable<bool> follow_and_leave(CallContext& call, std::shared_ptr<cache::Flight> flight);
  // After following: answered when it `followed`; else the store once more, then the call's
  // own attempt.
  Awaitable<FilterStatus> followed_or_own(CallContext& call, Call& state,
                                          std::shared_ptr<cache::Flight> flight, bool followed);
  // The call is under way on another instance: followed live (shared_flight.h).
  Awaitable<FilterStatus> follow_elsewhere(CallContext& call, Call& state,
                                           std::shared_ptr<cache::Flight> flight);
  // A stale entry this request claimed is refreshed by an internal call in the background;
  // false when the worker has no room for one.
  bool refresh_in_background(CallContext& call, boost::asio::any_io_executor executor) const;
  // The leader of a new flight with a semantic question: the entry of the nearest question
  // already answered, stored under this request's key too (its followers find it there).
  Awaitable<std::optional<cache::MemoryStore::Found>> find_semantic(CallContext& call, Call& state);
  Awaitable<FilterStatus> answer_unflown(CallContext& call, Call& state, cache::Flight& flight,
                                         const cache::MemoryStore::Found& found,
                                         std::string_view how);
  // Answers the call from `found` (`how`: the x-sluice-cache value); false when the entry
  // cannot be told in the caller's protocol (the call then goes to the origin).
  Awaitable<bool> serve(CallContext& call, Call& state, const cache::MemoryStore::Found& found,
                        std::string_view how);
  void store_answer(CallContext& call, Call& state, ir::Response answer);
  // The answer is complete or the call is over: stores what is whole and lands the shared call.
  void finish(CallContext& call, Call& state);
  void release_shared_claim(Call& state);

  const config::CacheSettings settings_;
  cache::MemoryStore& store_;
  cache::KeyAliases& key_aliases_;
  cache::Flights& flights_;
  const Shared shared_;
  const std::string alias_;  // the route's first alias: purges name it
  // The route part of every key: its first alias and its targets (cache/key.h KeyScope).
  const std::string route_scope_;
  // The caller protocol's upstream side, to read the answer it was sent back into IR.
  const protocol::UpstreamCodec& codec_;
  const std::unique_ptr<SemanticLookup> semantic_;  // null: no semantic cache on the route
};

}  // namespace sluice::pipeline
