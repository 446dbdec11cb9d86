#include "redis/answer_tier.h"

#include <cstdlib>
#include <optional>
#include <string>

#include <boost/asio/co_spawn.hpp>
#include <gtest/gtest.h>
#include <hiredis/hiredis.h>

#include "redis/purge.h"
#include "redis_test_settings.h"

// The answer cache's shared tier against a real redis-server (SLUICE_TEST_REDIS_URL): what
// one instance stores another finds, a claim is one call's, and a Redis that stops answering
// costs a request its timeout, never more.
namespace sluice::redis {
namespace {

using namespace std::chrono_literals;
using Claim = cache::SharedStore::Claim;

cache::Key key(std::uint8_t n) {
  cache::Key k{};
  k[0] = n;
  return k;
}

class AnswerTierTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::optional<config::StateSettings> settings = test_redis_settings();
    if (!settings) {
      GTEST_SKIP() << "SLUICE_TEST_REDIS_URL is not set (scripts/test-services.sh)";
    }
    settings_ = *settings;
    settings_.timeout = 50ms;
    settings_.key_prefix =
        "t" + std::to_string(std::chrono::system_clock::now().time_since_epoch().count()) + ":" +
        ::testing::UnitTest::GetInstance()->current_test_info()->name() + ":";
    for (const char* instance : {"i1", "i2"}) {
      tiers_.push_back(std::make_unique<AnswerTier>(ioc_, settings_, health_, instance));
      tiers_.back()->start();
    }
    for (int i = 0; i < 200 && !(tiers_[0]->connected() && tiers_[1]->connected()); ++i) {
      ioc_.run_for(10ms);
    }
    ASSERT_TRUE(tiers_[0]->connected() && tiers_[1]->connected());
  }

  // Runs `task` on the loop to its end (bounded: five seconds).
  template <typename T>
  T run(boost::asio::awaitable<T> task) {
    std::optional<T> out;
    boost::asio::co_spawn(
        ioc_, [&]() -> boost::asio::awaitable<void> { out = co_await std::move(task); },
        [](std::exception_ptr e) {
          if (e) std::rethrow_exception(e);
        });
    for (int i = 0; i < 500 && !out; ++i) {
      ioc_.run_one_for(10ms);
    }
    EXPECT_TRUE(out.has_value());
    return std::move(out).value_or(T{});
  }

  // Lets fire-and-forget writes reach Redis: a read on the same connection comes back after them.
  void flush(std::size_t tier) { run(tiers_[tier]->find_answer("flush", "-", key(255))); }

  void raw(const std::string& command) {
    redisContext* c = redisConnect(settings_.redis_host.c_str(), settings_.redis_port);
    ASSERT_TRUE(c != nullptr && c->err == 0);
    freeReplyObject(redisCommand(c, command.c_str()));
    redisFree(c);
  }

  config::StateSettings settings_;
  boost::asio::io_context ioc_;
  Health health_{"cache", "test", "the origin answers"};
  std::vector<std::unique_ptr<AnswerTier>> tiers_;
};

TEST_F(AnswerTierTest, WhatOneInstanceStoresAnotherFinds) {
  tiers_[0]->put_answer("chat", "g:a", key(1), std::string("rec\0ord", 7), 60s);
  flush(0);
  EXPECT_EQ(run(tiers_[1]->find_answer("chat", "g:a", key(1))), std::string("rec\0ord", 7));
  // Another tenant or route under the same key is another name.
  EXPECT_EQ(run(tiers_[1]->find_answer("chat", "g:b", key(1))), std::nullopt);
  EXPECT_EQ(run(tiers_[1]->find_answer("chat2", "g:a", key(1))), std::nullopt);
  EXPECT_TRUE(health_.up());
}

TEST_F(AnswerTierTest, AnEntryExpiresWithItsTtl) {
  tiers_[0]->put_answer("chat", "g:a", key(2), "short-lived", 1ms);
  flush(0);
  std::optional<std::string> found = std::string("not yet");
  for (int i = 0; i < 100 && found; ++i) {
    found = run(tiers_[1]->find_answer("chat", "g:a", key(2)));
    if (found) ioc_.run_for(5ms);
  }
  EXPECT_EQ(found, std::nullopt);
}

TEST_F(AnswerTierTest, AClaimIsOneCallsUntilItFinishes) {
  cache::Key digest = key(9);
  cache::Key other = key(10);
  Claim first = run(tiers_[0]->claim(key(3), digest, 60s));
  EXPECT_EQ(first.result, Claim::Result::kClaimed);
  Claim elsewhere = run(tiers_[1]->claim(key(3), digest, 60s));
  EXPECT_EQ(elsewhere.result, Claim::Result::kHeld);
  EXPECT_EQ(elsewhere.holder_digest, cache::to_hex(digest));
  EXPECT_FALSE(elsewhere.held_here);
  Claim here = run(tiers_[0]->claim(key(3), other, 60s));
  EXPECT_EQ(here.result, Claim::Result::kHeld);
  EXPECT_TRUE(here.held_here);
  EXPECT_EQ(here.holder_digest, cache::to_hex(digest));

  // Only the holder's finish releases it; a finish by another instance changes nothing.
  tiers_[1]->finish_claim(key(3), digest, std::nullopt, 60s);
  flush(1);
  EXPECT_EQ(run(tiers_[1]->claim(key(3), digest, 60s)).result, Claim::Result::kHeld);
  tiers_[0]->finish_claim(key(3), digest, std::string("answer"), 60s);
  flush(0);
  Claim after = run(tiers_[1]->claim(key(3), digest, 60s));
  EXPECT_EQ(after.result, Claim::Result::kDone);
  EXPECT_EQ(after.record, "answer");
}

TEST_F(AnswerTierTest, AFailedCallLeavesNothingToReplay) {
  const cache::Key digest = key(11);
  EXPECT_EQ(run(tiers_[0]->claim(key(4), digest, 60s)).result, Claim::Result::kClaimed);
  tiers_[0]->finish_claim(key(4), digest, std::nullopt, 60s);
  flush(0);
  EXPECT_EQ(run(tiers_[1]->claim(key(4), digest, 60s)).result, Claim::Result::kClaimed);
}

TEST_F(AnswerTierTest, AFlightsClaimIsOneInstancesUntilItsAnswerIsThere) {
  EXPECT_EQ(run(tiers_[0]->claim_answer("chat", "g:a", key(13), 60s)).result,
            Claim::Result::kClaimed);
  const Claim elsewhere = run(tiers_[1]->claim_answer("chat", "g:a", key(13), 60s));
  EXPECT_EQ(elsewhere.result, Claim::Result::kHeld);
  EXPECT_FALSE(elsewhere.held_here);
  const Claim here = run(tiers_[0]->claim_answer("chat", "g:a", key(13), 60s));
  EXPECT_EQ(here.result, Claim::Result::kHeld);
  EXPECT_TRUE(here.held_here);
  // Another tenant's same key is another flight.
  EXPECT_EQ(run(tiers_[1]->claim_answer("chat", "g:b", key(13), 60s)).result,
            Claim::Result::kClaimed);

  // Only the holder releases it; once it has, the waiter finds the answer put before.
  tiers_[1]->release_answer("chat", "g:a", key(13));
  flush(1);
  EXPECT_EQ(run(tiers_[1]->claim_answer("chat", "g:a", key(13), 60s)).result, Claim::Result::kHeld);
  tiers_[0]->put_answer("chat", "g:a", key(13), "answer", 60s);
  tiers_[0]->release_answer("chat", "g:a", key(13));
  flush(0);
  const Claim done = run(tiers_[1]->claim_answer("chat", "g:a", key(13), 60s));
  EXPECT_EQ(done.result, Claim::Result::kDone);
  EXPECT_EQ(done.record, "answer");
  EXPECT_EQ(run(tiers_[1]->find_answer("chat", "g:a", key(13))), "answer");
}

TEST_F(AnswerTierTest, AFlightThatFailedLeavesItsKeyToTheNextCaller) {
  EXPECT_EQ(run(tiers_[0]->claim_answer("chat", "g:a", key(14), 60s)).result,
            Claim::Result::kClaimed);
  tiers_[0]->release_answer("chat", "g:a", key(14));
  flush(0);
  EXPECT_EQ(run(tiers_[1]->claim_answer("chat", "g:a", key(14), 60s)).result,
            Claim::Result::kClaimed);
}

TEST_F(AnswerTierTest, AFlightsClaimLapsesWithItsHold) {
  EXPECT_EQ(run(tiers_[0]->claim_answer("chat", "g:a", key(16), 1ms)).result,
            Claim::Result::kClaimed);
  Claim next;
  for (int i = 0; i < 100 && next.result != Claim::Result::kClaimed; ++i) {
    next = run(tiers_[1]->claim_answer("chat", "g:a", key(16), 60s));
    if (next.result != Claim::Result::kClaimed) ioc_.run_for(5ms);
  }
  EXPECT_EQ(next.result, Claim::Result::kClaimed) << "an instance that died holds nothing long";
}

TEST_F(AnswerTierTest, ARedisThatStopsAnsweringCostsTheTimeoutThenAnswersAgain) {
  tiers_[0]->put_answer("chat", "g:a", key(5), "kept", 60s);
  flush(0);
  raw("CLIENT PAUSE 400");
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(run(tiers_[1]->find_answer("chat", "g:a", key(5))), std::nullopt);
  EXPECT_EQ(run(tiers_[1]->claim(key(6), key(12), 60s)).result, Claim::Result::kUnavailable);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 350ms) << "two timeouts of 50 ms";
  EXPECT_FALSE(health_.up());
  EXPECT_GE(health_.errors(), 2u);
  // Bounded wait for the pause to end; then the late replies are dropped and Redis answers.
  std::optional<std::string> found;
  for (int i = 0; i < 100 && !found; ++i) {
    found = run(tiers_[1]->find_answer("chat", "g:a", key(5)));
  }
  EXPECT_EQ(found, "kept");
  EXPECT_TRUE(health_.up());
}

TEST_F(AnswerTierTest, APurgeDropsItsRouteAndTenantOnly) {
  tiers_[0]->put_answer("chat", "g:a", key(7), "a", 60s);
  tiers_[0]->put_answer("chat", "g:b", key(7), "b", 60s);
  tiers_[0]->put_answer("ch*", "g:a", key(7), "glob", 60s);
  tiers_[0]->put_answer("other", "g:a", key(7), "other", 60s);
  // A flight under way is not an answer: a purge leaves its claim.
  EXPECT_EQ(run(tiers_[0]->claim_answer("chat", "g:a", key(17), 60s)).result,
            Claim::Result::kClaimed);
  flush(0);
  std::string error;
  // "ch*" is a route's name, not a pattern: purging it leaves "chat" alone, and the reverse.
  EXPECT_EQ(purge_matching(settings_, AnswerTier::purge_pattern(settings_.key_prefix, "ch*", "g:a"),
                           5s, error),
            1u)
      << error;
  EXPECT_EQ(purge_matching(settings_, AnswerTier::purge_pattern(settings_.key_prefix, "chat", ""),
                           5s, error),
            2u)
      << error;
  EXPECT_EQ(run(tiers_[1]->find_answer("other", "g:a", key(7))), "other");
  EXPECT_EQ(run(tiers_[1]->claim_answer("chat", "g:a", key(17), 60s)).result, Claim::Result::kHeld);
  // By the key's hex start: key(7) is 07 then zeros.
  tiers_[0]->put_answer("other", "g:a", key(8), "eight", 60s);
  flush(0);
  EXPECT_EQ(
      purge_matching(settings_, AnswerTier::purge_pattern(settings_.key_prefix, "", "", "0800"), 5s,
                     error),
      1u)
      << error;
  EXPECT_EQ(run(tiers_[1]->find_answer("other", "g:a", key(8))), std::nullopt);
  EXPECT_EQ(run(tiers_[1]->find_answer("chat", "g:a", key(7))), std::nullopt);
}

}  // namespace
}  // namespace sluice::redis
