#pragma once

#include <chrono>
#include <string>

#include "cache/shared_store.h"
#include "redis/commands.h"

namespace sluice::redis {

// The answer cache's and Idempotency-Key's shared store in one Redis (cache/shared_store.h).
//
// Names, under the section's key_prefix ("sluice:cache:" / "sluice:idem:"):
//   e:<alias>:<tenant>:{<key hex>}  a cache record (alias and tenant percent-escaped, so a purge
//                                   can MATCH them without globbing into other routes)
//   e:<alias>:<tenant>:{<key hex>}:claim
//                                   the cache flight under way: ":<instance>" (a waiter on
//                                   another instance looks for the record, then the claim)
//   e:<alias>:<tenant>:{<key hex>}:live
//                                   that flight's answer as it comes: a stream of live
//                                   records (cache/live_record.h), read by the waiters
//   e:<alias>:<tenant>:{<key hex>}:watch
//                                   set for a second by each read of a waiter: while it is
//                                   there the holder's call goes on without its own caller
//   v:<alias>:<tenant>:{<bucket hex>}
//                                   a semantic bucket's vector log: a stream of vector records
//                                   (cache/vector_record.h), the newest kMaxBucketVectors
//   {<key hex>}                     an idempotent replay record
//   {<key hex>}:claim               the call under way: "<digest hex>:<instance>" (one hash
//                                   tag, so a cluster keeps the pair on one node)
// Every command is bounded by the section's timeout_ms (Commands); a store that does not
// answer is a miss. One per worker.
class AnswerTier final : public cache::SharedStore {
 public:
  // `instance`: this process's id, so a claim is released only by the instance that took it.
  AnswerTier(boost::asio::io_context& ioc, const config::StateSettings& settings, Health& health,
             std::string instance);

  void start() { commands_.start(); }
  bool connected() const { return commands_.connected(); }

  boost::asio::awaitable<std::optional<std::string>> find_answer(std::string_view alias,
                                                                 std::string_view tenant,
                                                                 const cache::Key& key) override;
  void put_answer(std::string_view alias, std::string_view tenant, const cache::Key& key,
                  std::string record, std::chrono::milliseconds ttl) override;
  boost::asio::awaitable<Claim> claim_answer(std::string_view alias, std::string_view tenant,
                                             const cache::Key& key,
                                             std::chrono::milliseconds hold) override;
  void release_answer(std::string_view alias, std::string_view tenant,
                      const cache::Key& key) override;
  void append_live(std::string_view alias, std::string_view tenant, const cache::Key& key,
                   std::string record, std::chrono::milliseconds ttl,
                   std::function<void(std::chrono::milliseconds)> watched) override;
  boost::asio::awaitable<std::optional<LiveLog>> live_after(std::string_view alias,
                                                            std::string_view tenant,
                                                            const cache::Key& key,
                                                            cache::LogPosition after,
                                                            std::size_t max) override;
  void append_vector(std::string_view alias, std::string_view tenant, const cache::Key& bucket,
                     std::string record, std::chrono::milliseconds ttl) override;
  boost::asio::awaitable<std::optional<VectorLog>> vectors_after(std::string_view alias,
                                                                 std::string_view tenant,
                                                                 const cache::Key& bucket,
                                                                 cache::LogPosition after,
                                                                 std::size_t max) override;
  boost::asio::awaitable<Claim> claim(const cache::Key& key, const cache::Key& digest,
                                      std::chrono::milliseconds hold) override;
  void finish_claim(const cache::Key& key, const cache::Key& digest,
                    std::optional<std::string> record, std::chrono::milliseconds ttl) override;

  enum class Records : std::uint8_t { kAnswers, kVectorLogs };
  // The MATCH pattern of the records a purge drops: `alias`, `tenant` and the key's hex prefix
  // ("" for any; hex digits only, so nothing to escape). Vector logs are named by bucket, not
  // by answer: a purge by key prefix leaves them (their dangling records are dropped when read).
  static std::string purge_pattern(std::string_view prefix, std::string_view alias,
                                   std::string_view tenant, std::string_view key_prefix = {},
                                   Records kind = Records::kAnswers);

 private:
  std::string scoped_name(std::string_view kind, std::string_view alias, std::string_view tenant,
                          const cache::Key& key) const;
  std::string answer_name(std::string_view alias, std::string_view tenant,
                          const cache::Key& key) const;
  std::string vector_log_name(std::string_view alias, std::string_view tenant,
                              const cache::Key& bucket) const;
  std::string claim_value(const cache::Key& digest) const;

  const config::StateSettings settings_;
  const std::string instance_;
  Commands commands_;
};

}  // namespace sluice::redis
