#pragma once

#include <memory>
#include <string>

#include "cache/cache_state.h"
#include "cache/shared_store.h"
#include "config/idempotency.h"
#include "pipeline/filter.h"
#include "pipeline/filter_chain.h"
#include "protocol/upstream.h"

namespace sluice::pipeline {

// `Idempotency-Key` on model calls (docs/cache.md#idempotency), in every chat chain when the
// config's `idempotency:` is on. A caller that retries after a timeout must not pay twice:
//   - a request with a key, within its tenant (key group, else the key) and route, is
//     remembered with a digest of its bytes (protocol, path, body);
//   - the same key and the same request while the first is under way joins it (single-flight,
//     the events so far and then live: Idempotent-Replayed: true, outcome coalesced);
//   - after it completed, it gets the same answer again, id included (Idempotent-Replayed:
//     true, outcome replayed), for `ttl_ms`;
//   - the same key with a different request is refused: 422 in the caller's protocol
//     (code idempotency_key_reused), 409 while the first is still under way;
//   - a call that failed is not kept: the retry goes to the origin.
// With `idempotency.redis`, every instance sees the others' calls (cache/shared_store.h): a
// completed answer is replayed wherever the retry lands; a retry that reaches another instance
// while the first call is under way is told to retry (409 idempotency_key_in_use, Retry-After),
// never sent upstream a second time. A Redis that does not answer leaves each instance on its
// own (sluice_cache_backend_errors_total counts it).
// Each replay and join is a usage record billed at zero; the paid record is the first call's.
// A request without the header costs one header lookup.
class IdempotencyFilter final : public Filter {
 public:
  static std::unique_ptr<Filter> make(const FilterSetup& setup);
  IdempotencyFilter(config::IdempotencySettings settings, cache::CacheState& cache,
                    cache::SharedStore* shared, std::string alias,
                    const protocol::UpstreamCodec& codec);

  std::string_view name() const override { return "idempotency"; }
  FilterHooks hooks() const override {
    return {FilterHook::kBeforePlan, FilterHook::kResponseHead, FilterHook::kResponseBody,
            FilterHook::kStreamData, FilterHook::kEnd};
  }
  Awaitable<FilterStatus> before_plan(CallContext& call) override;
  FilterStatus on_response_head(CallContext& call, ResponseHead& head) override;
  FilterStatus on_response_body(CallContext& call, std::string& body) override;
  FilterStatus on_stream_data(CallContext& call, std::string& data) override;
  void on_end(CallContext& call) override;

 private:
  struct Call;
  Awaitable<FilterStatus> replay(CallContext& call, const cache::Entry& entry);
  Awaitable<FilterStatus> board(CallContext& call, Call& state);
  // Asks the other instances (the shared store): an answer to replay, a call under way, or the
  // key is this call's. nullopt: go on and board locally.
  Awaitable<std::optional<FilterStatus>> ask_shared(CallContext& call, Call& state);
  // Keeps the first call's whole answer for retries, with its request's digest; null when it
  // is larger than an entry may be.
  std::shared_ptr<const cache::Entry> remember(CallContext& call, Call& state, ir::Response answer);

  const config::IdempotencySettings settings_;
  cache::MemoryStore& replays_;
  cache::Flights& flights_;
  cache::SharedStore* const shared_;  // null: this instance alone
  const std::string alias_;
  const protocol::UpstreamCodec& codec_;
};

}  // namespace sluice::pipeline
