#include "limits/redis_limiter.h"

#include <cstdlib>
#include <memory>
#include <optional>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <gtest/gtest.h>
#include <hiredis/hiredis.h>

#include "limits/limit_plan.h"
#include "test_config.h"

// The Lua scripts' semantics against a real redis-server (SLUICE_TEST_REDIS_URL, started by
// scripts/run-tests.sh through scripts/test-services.sh); skipped without one.
namespace sluice::limits {
namespace {

using namespace std::chrono_literals;
using Status = Decision::Status;

std::shared_ptr<const config::Config> load(const std::string& url, const std::string& prefix,
                                           const std::string& limits) {
  return load_test_config("state: { redis: { url: \"" + url + "\", key_prefix: \"" + prefix +
                          "\", timeout_ms: 20 } }\n" + limits);
}

class RedisLimiterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* url = std::getenv("SLUICE_TEST_REDIS_URL");
    if (url == nullptr) {
      GTEST_SKIP() << "SLUICE_TEST_REDIS_URL is not set (scripts/test-services.sh)";
    }
    url_ = url;
    // A prefix of our own per test: buckets of earlier runs never interfere.
    prefix_ = "t" + std::to_string(std::chrono::system_clock::now().time_since_epoch().count()) +
              ":" + ::testing::UnitTest::GetInstance()->current_test_info()->name() + ":";
  }

  void make(const std::string& limits, std::size_t instances = 2) {
    config_ = load(url_, prefix_, limits);
    plan_ = std::make_unique<LimitPlan>(config_, local_);
    for (std::size_t i = 0; i < instances; ++i) {
      std::string lease_prefix = "i";
      lease_prefix += std::to_string(i);
      lease_prefix += ':';
      limiters_.push_back(std::make_unique<RedisLimiter>(ioc_, config_->state, local_, health_,
                                                         std::move(lease_prefix)));
      limiters_.back()->start();
    }
    // Bounded wait for the connections (and their SCRIPT LOADs).
    for (int i = 0; i < 200 && !all_connected(); ++i) {
      ioc_.run_for(10ms);
    }
    ASSERT_TRUE(all_connected());
  }

  bool all_connected() const {
    for (const auto& l : limiters_) {
      if (!l->connected()) {
        return false;
      }
    }
    return true;
  }

  Decision check(std::size_t instance, Lease& lease, std::uint64_t tokens = 1,
                 std::chrono::milliseconds timeout = 500ms) {
    std::optional<Decision> out;
    const Charges charges = plan_->charges(&config_->keys[0], "chat", "mock", tokens);
    const auto now = std::chrono::steady_clock::now();
    boost::asio::co_spawn(
        ioc_,
        [&]() -> boost::asio::awaitable<void> {
          out = co_await limiters_[instance]->check(charges, now, now + timeout, lease);
        },
        [](std::exception_ptr e) {
          if (e) {
            std::rethrow_exception(e);
          }
        });
    for (int i = 0; i < 1000 && !out; ++i) {
      ioc_.run_one_for(10ms);
    }
    EXPECT_TRUE(out.has_value());
    return out.value_or(Decision{});
  }
  Decision check(std::size_t instance, std::uint64_t tokens = 1) {
    Lease lease;
    return check(instance, lease, tokens);
  }

  // A plain synchronous connection for what the test does behind the limiter's back.
  redisReply* raw(const char* format, const std::string& a = "", const std::string& b = "") {
    if (sync_ == nullptr) {
      sync_ = redisConnect(config_->state.redis_host.c_str(), config_->state.redis_port);
    }
    return static_cast<redisReply*>(redisCommand(sync_, format, a.c_str(), b.c_str()));
  }

  long long zcard(const std::string& key) {
    redisReply* r = raw("ZCARD %s", key);
    const long long n = r != nullptr && r->type == REDIS_REPLY_INTEGER ? r->integer : -1;
    freeReplyObject(r);
    return n;
  }

  // Runs the loop (bounded) until every check `instance` sent has had its reply, late or not.
  void await_replies(std::size_t instance) {
    for (int i = 0; i < 400 && limiters_[instance]->in_flight_for_test() > 0; ++i) {
      ioc_.run_for(5ms);
    }
    ASSERT_EQ(limiters_[instance]->in_flight_for_test(), 0u);
  }

  void TearDown() override {
    if (sync_ != nullptr) {
      redisFree(sync_);
    }
  }

  std::string url_;
  std::string prefix_;
  boost::asio::io_context ioc_;
  LocalLimiter local_;
  redis::Health health_{"limits", "test", "failing open"};
  std::shared_ptr<const config::Config> config_;
  std::unique_ptr<LimitPlan> plan_;
  std::vector<std::unique_ptr<RedisLimiter>> limiters_;
  redisContext* sync_ = nullptr;
};

TEST_F(RedisLimiterTest, TwoInstancesShareOneBucket) {
  make("limits: { key: { rpm: 5 } }\n");
  int admitted = 0;
  for (int i = 0; i < 10; ++i) {
    const Decision d = check(i % 2);
    ASSERT_NE(d.status, Status::kError) << d.error;
    admitted += d.status == Status::kOk ? 1 : 0;
  }
  EXPECT_EQ(admitted, 5);
  const Decision refused = check(0);
  ASSERT_EQ(refused.status, Status::kOverLimit);
  EXPECT_EQ(refused.limited->layer, Layer::kKey);
  EXPECT_EQ(refused.limited->dimension, Dimension::kRequests);
  EXPECT_GT(refused.retry_after, 10000ms);  // one request every 12 s
  EXPECT_LE(refused.retry_after, 12000ms);
  EXPECT_EQ(refused.requests.remaining, 0u);
}

TEST_F(RedisLimiterTest, AllOrNoneAndSettlement) {
  make("limits: { key: { rpm: 100, tpm: 1000 }, groups: { research: { tpm: 600 } } }\n");
  const Decision big = check(0, 700);
  ASSERT_EQ(big.status, Status::kOverLimit);
  EXPECT_TRUE(big.never);
  EXPECT_EQ(big.limited->layer, Layer::kGroup);
  const Decision first = check(1, 500);
  ASSERT_EQ(first.status, Status::kOk);
  EXPECT_EQ(first.requests.remaining, 99u);  // the refusal took nothing
  EXPECT_EQ(first.tokens.limit, 600u);
  EXPECT_EQ(first.tokens.remaining, 100u);
  EXPECT_EQ(check(0, 200).status, Status::kOverLimit);
  limiters_[0]->correct(plan_->token_charges(&config_->keys[0], "chat", "mock", -400),
                        std::chrono::steady_clock::now());
  // The correction is fire-and-forget but ordered on the connection: the next check sees it.
  const Decision after = check(0, 200);
  ASSERT_EQ(after.status, Status::kOk);
  EXPECT_GE(after.tokens.remaining, 300u);
  EXPECT_LE(after.tokens.remaining, 302u);  // plus what refilled meanwhile (10 a second)
}

TEST_F(RedisLimiterTest, SlotsAreLeasesThatExpire) {
  make("limits: { groups: { research: { concurrency: 2 } } }\n");
  Lease a, b, c;
  ASSERT_EQ(check(0, a).status, Status::kOk);
  ASSERT_EQ(check(1, b).status, Status::kOk);
  EXPECT_EQ(check(0, c).status, Status::kOverLimit);
  // The release is fire-and-forget on instance 1's connection; instance 0's next check travels
  // on another connection, so wait (bounded) until Redis has applied it before checking.
  const std::string slots = plan_->charges(&config_->keys[0], "chat", "", 1)[0].bucket->redis_key;
  limiters_[1]->release(b);
  long long held = -1;
  for (int i = 0; i < 200 && held != 1; ++i) {
    ioc_.run_for(5ms);
    redisReply* r = raw("ZCARD %s", slots);
    held = r != nullptr && r->type == REDIS_REPLY_INTEGER ? r->integer : -1;
    freeReplyObject(r);
  }
  ASSERT_EQ(held, 1);
  EXPECT_EQ(check(0, c).status, Status::kOk);
  // An instance that died holding a slot: its lease (already past its expiry) is swept by the
  // next acquire instead of locking the group out.
  freeReplyObject(raw("DEL %s", slots));
  freeReplyObject(raw("ZADD %s 1 %s", slots, "dead:1"));
  freeReplyObject(raw("ZADD %s 1 %s", slots, "dead:2"));
  Lease d;
  EXPECT_EQ(check(1, d).status, Status::kOk);
}

TEST_F(RedisLimiterTest, ScriptCacheFlushedAndRedisTooSlow) {
  make("limits: { key: { rpm: 100 } }\n", 1);
  EXPECT_EQ(check(0).status, Status::kOk);
  freeReplyObject(raw("SCRIPT FLUSH"));
  EXPECT_EQ(check(0).status, Status::kOk);  // NOSCRIPT -> the script itself, once
  // Redis stalls for 300 ms: a check with a 20 ms budget answers kError in time.
  freeReplyObject(raw("CLIENT PAUSE %s", "300"));
  Lease lease;
  const auto started = std::chrono::steady_clock::now();
  const Decision slow = check(0, lease, 1, 20ms);
  EXPECT_EQ(slow.status, Status::kError);
  EXPECT_LT(std::chrono::steady_clock::now() - started, 200ms);
  EXPECT_FALSE(health_.up());
  // After the pause the same connection answers again and health recovers.
  Decision later;
  for (int i = 0; i < 100; ++i) {
    later = check(0);
    if (later.status == Status::kOk) {
      break;
    }
  }
  EXPECT_EQ(later.status, Status::kOk);
  EXPECT_TRUE(health_.up());
}

// A stall longer than the timeout: the checks fail open at once, and when Redis runs them later
// they must take nothing, or the late leases (held for lease_ttl_ms) lock the group out.
TEST_F(RedisLimiterTest, ChecksAbandonedInAStallTakeNothing) {
  make("limits: { groups: { research: { rpm: 10, concurrency: 2 } } }\n", 1);
  const std::string slots = plan_->charges(&config_->keys[0], "chat", "", 1)[0].bucket->redis_key;
  Lease held;
  ASSERT_EQ(check(0, held).status, Status::kOk);
  // Longer than the timeout plus the grace Redis gives a late script.
  freeReplyObject(raw("CLIENT PAUSE %s", "600"));
  for (int i = 0; i < 3; ++i) {
    Lease late;
    EXPECT_EQ(check(0, late, 1, 20ms).status, Status::kError);
    EXPECT_TRUE(late.empty());
  }
  await_replies(0);
  EXPECT_EQ(zcard(slots), 1);
  Lease next;
  const Decision d = check(0, next);
  ASSERT_EQ(d.status, Status::kOk) << "a stalled Redis locked the group out";
  EXPECT_EQ(d.requests.remaining, 8u);  // 10 - the two admitted checks (refill: 1 per 6 s)
  EXPECT_EQ(zcard(slots), 2);
}

// The deadline is only as good as the estimate of Redis's clock: a late script that still passed
// it took its charges, and its late reply must give them back.
TEST_F(RedisLimiterTest, ALateReplyGivesBackWhatItTook) {
  make("limits: { groups: { research: { rpm: 10, concurrency: 2 } } }\n", 1);
  const std::string slots = plan_->charges(&config_->keys[0], "chat", "", 1)[0].bucket->redis_key;
  Lease held;
  ASSERT_EQ(check(0, held).status, Status::kOk);
  limiters_[0]->skew_deadlines_for_test(60s);
  freeReplyObject(raw("CLIENT PAUSE %s", "300"));
  Lease late;
  EXPECT_EQ(check(0, late, 1, 20ms).status, Status::kError);
  await_replies(0);
  // The give-back was sent after the late reply, ahead of this check on the same connection.
  Lease next;
  const Decision d = check(0, next);
  ASSERT_EQ(d.status, Status::kOk) << "the late lease was never released";
  EXPECT_EQ(d.requests.remaining, 8u);
  EXPECT_EQ(zcard(slots), 2);
}

}  // namespace
}  // namespace sluice::limits
