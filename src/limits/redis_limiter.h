#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include "config/config.h"
#include "limits/limiter.h"
#include "limits/local_limiter.h"
#include "redis/connection.h"
#include "redis/health.h"

namespace sluice::limits {

// Limits shared by every instance through one Redis: a check is one EVALSHA round trip that
// takes all of a request's token buckets and concurrency slots atomically (token_bucket_script.h),
// bounded by `deadline`. A check abandoned at its deadline must leave nothing taken, or a stalled
// Redis that runs it later would hold its slots for the lease TTL: the script gets the deadline
// (plus kScriptDeadlineGrace) in Redis's clock and takes nothing past it, and a reply that still
// comes after the deadline with charges taken has them given back at once. While the connection
// is down a check answers kError at once. Instance-wide slots stay local (`local`). One per
// worker, on that worker's io_context; all calls on its thread.
class RedisLimiter final : public Limiter {
 public:
  // At most this many checks wait on one worker's connection; beyond it a check is kError.
  static constexpr std::size_t kMaxPending = 1024;
  // How long after a check's deadline Redis may still run its script. Not zero: a worker
  // starved of CPU handles a timely reply after its own timer has expired and still takes the
  // answer, and a script refused for being a few ms late would turn that answer into kError (a
  // fail-open). Scripts run within the grace whose reply comes after the deadline are given
  // back; only a connection lost in that window leaves its slots to the lease TTL.
  static constexpr std::chrono::milliseconds kScriptDeadlineGrace{250};

  RedisLimiter(boost::asio::io_context& ioc, const config::StateSettings& settings,
               LocalLimiter& local, redis::Health& health, std::string lease_prefix);
  ~RedisLimiter() override;

  void start();

  boost::asio::awaitable<Decision> check(std::span<const Charge> charges, Clock::time_point now,
                                         Clock::time_point deadline, Lease& lease) override;
  void correct(std::span<const Charge> charges, Clock::time_point now) override;
  void release(Lease& lease) override;

  bool connected() const { return connection_.connected(); }
  // Checks sent whose reply has not come back yet, abandoned ones included.
  std::size_t in_flight_for_test() const { return pending_.size() - free_.size(); }
  // Moves every deadline sent to Redis `by` later, as if Redis's clock were behind ours by that
  // much more than measured: a late script then still takes its charges.
  void skew_deadlines_for_test(std::chrono::milliseconds by) { deadline_skew_ = by; }

 private:
  struct Pending;
  static void on_reply(redisAsyncContext* ac, void* reply, void* privdata);
  static void on_script_loaded(redisAsyncContext* ac, void* reply, void* privdata);
  static void on_time(redisAsyncContext* ac, void* reply, void* privdata);
  bool send(Pending& p);
  void give_back(Pending& p);
  void learn_clock(long long redis_ms, Clock::time_point asked);
  std::int64_t redis_deadline(Clock::time_point deadline) const;
  Pending* acquire();
  void free(Pending* p);

  LocalLimiter& local_;
  redis::Health& health_;     // every worker's limiter of the instance
  std::string lease_prefix_;  // "<instance>:<worker>:"
  std::uint64_t next_lease_ = 1;
  std::string check_sha_;
  std::string correct_sha_;
  // Redis's clock minus our steady clock, in ms: an upper bound (the Redis time of an answer
  // minus when it was asked), refreshed by every answer taken in time, so it is off by at most
  // that answer's round trip and follows drift. Unknown until a connection's TIME answers.
  std::optional<std::int64_t> redis_ahead_ms_;
  Clock::time_point time_asked_{};
  std::chrono::milliseconds deadline_skew_{0};
  std::vector<std::unique_ptr<Pending>> pending_;
  std::vector<Pending*> free_;
  boost::asio::io_context& ioc_;
  redis::RedisConnection connection_;  // last: destroyed first, failing what still waits
};

}  // namespace sluice::limits
