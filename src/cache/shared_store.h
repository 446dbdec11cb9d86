#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/asio/awaitable.hpp>

#include "cache/key.h"
#include "cache/log_position.h"

namespace sluice::cache {

// The store every instance shares, behind each instance's MemoryStore (docs/cache.md#redis):
// a local miss asks it, and what is stored locally is written to it too, so an answer paid
// for on one instance serves the others, and an Idempotency-Key retry that reaches another
// instance finds the first call. Records are entry_codec.h's.
//
// Never on the request's critical path for longer than its timeout: a store that is slow or
// down answers "nothing" (a miss, kUnavailable), so a request degrades to the origin, never to
// an error. One per worker (the Redis tier: redis/answer_tier.h); calls on that worker's thread.
class SharedStore {
 public:
  virtual ~SharedStore() = default;

  // The cache record under (alias, tenant, key), or nullopt: absent, or no answer in time.
  virtual boost::asio::awaitable<std::optional<std::string>> find_answer(std::string_view alias,
                                                                         std::string_view tenant,
                                                                         const Key& key) = 0;
  // Stores a cache record; it expires after `ttl`. Not awaited: the request does not wait.
  virtual void put_answer(std::string_view alias, std::string_view tenant, const Key& key,
                          std::string record, std::chrono::milliseconds ttl) = 0;

  // What a claim found: the answer, a claim of this call, or another call's.
  struct Claim {
    enum class Result : std::uint8_t {
      kClaimed,      // this call is the first anywhere: it goes on, and finishes the claim
      kDone,         // an earlier call's answer: `record`
      kHeld,         // a call is under way: `holder_digest` is its request's (hex)
      kUnavailable,  // the store did not answer: each instance on its own
    };
    Result result = Result::kUnavailable;
    std::string record;
    std::string holder_digest;
    bool held_here = false;  // kHeld: by a call of this instance (its flight can be joined)
  };

  // Single-flight across instances (docs/cache.md#redis): the cache record under (alias,
  // tenant, key) when it is there (kDone); else the call is claimed for this instance for
  // `hold` (kClaimed, until release_answer), unless an instance holds it (kHeld; held_here
  // when it is this one). `holder_digest` is not used: the key is the whole request.
  virtual boost::asio::awaitable<Claim> claim_answer(std::string_view alias,
                                                     std::string_view tenant, const Key& key,
                                                     std::chrono::milliseconds hold) = 0;
  // The claimed call is over (its answer, if any, was put before: the same connection keeps
  // the order, so a waiter never sees the claim gone before the answer is there). Not awaited.
  virtual void release_answer(std::string_view alias, std::string_view tenant, const Key& key) = 0;

  // A shared call's answer live (cache/live_record.h): the claim holder appends its records
  // to the call's log, which lives `ttl` from its newest. Not awaited; on the connection that
  // then releases the claim, so a waiter sees the log's end before the claim is gone.
  // `watched`, when the store answers: for how much longer a waiter elsewhere is known to
  // follow the call (0: none does), as live_after tells the store.
  virtual void append_live(std::string_view alias, std::string_view tenant, const Key& key,
                           std::string record, std::chrono::milliseconds ttl,
                           std::function<void(std::chrono::milliseconds)> watched) = 0;
  static constexpr std::chrono::milliseconds kLiveWatch{1000};
  struct LiveLog {
    std::vector<std::string> records;  // oldest first
    LogPosition last;                  // the last record's; `after` when there are none
    bool claimed = false;              // the call's claim is still held (by anyone)
  };
  // The call's live records after `after` (all of them from LogPosition{}), at most `max`, and
  // whether its claim is still held, read together; nullopt when the store did not answer in
  // time. Each read also says this instance follows the call, for kLiveWatch from now.
  virtual boost::asio::awaitable<std::optional<LiveLog>> live_after(std::string_view alias,
                                                                    std::string_view tenant,
                                                                    const Key& key,
                                                                    LogPosition after,
                                                                    std::size_t max) = 0;

  // The semantic cache's vectors across instances (docs/cache.md#redis): each bucket
  // (SemanticIndex) has a log of vector records (cache/vector_record.h) that every instance
  // appends the questions it answered to, and reads from where it last stopped, into its own
  // index. The log keeps its newest SemanticIndex::kMaxBucketVectors records and lives `ttl`
  // from its newest. Not awaited.
  virtual void append_vector(std::string_view alias, std::string_view tenant, const Key& bucket,
                             std::string record, std::chrono::milliseconds ttl) = 0;
  struct VectorLog {
    std::vector<std::string> records;  // oldest first
    LogPosition last;                  // the last record's; `after` when there are none
  };
  // The records of the bucket's log after `after` (all of them from LogPosition{}), at most
  // `max`, or nullopt when the store did not answer in time.
  virtual boost::asio::awaitable<std::optional<VectorLog>> vectors_after(std::string_view alias,
                                                                         std::string_view tenant,
                                                                         const Key& bucket,
                                                                         LogPosition after,
                                                                         std::size_t max) = 0;

  // An Idempotency-Key across instances: the replay record under `key` if there is one, else
  // the key is claimed for this call (for `hold`, until finish_claim), unless another call holds
  // it. `digest`: this request's (cache/key.h request_digest), so that a retry elsewhere can
  // tell the same request from another one under the same key.
  virtual boost::asio::awaitable<Claim> claim(const Key& key, const Key& digest,
                                              std::chrono::milliseconds hold) = 0;
  // The claimed call is over: its replay record (kept for `ttl`), or nullopt when it failed
  // (nothing is kept: a failure is never replayed). The claim is released either way, and
  // only if it is still this call's. Not awaited.
  virtual void finish_claim(const Key& key, const Key& digest, std::optional<std::string> record,
                            std::chrono::milliseconds ttl) = 0;
};

}  // namespace sluice::cache
