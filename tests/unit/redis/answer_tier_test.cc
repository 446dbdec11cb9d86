#include "redis/answer_tier.h"

#include <cstdlib>
#include <optional>
#include <string>

#include <boost/asio/co_spawn.hpp>
#include <gtest/gtest.h>
#include <hiredis/hiredis.h>

#include "cache/semantic_index.h"
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

TEST_F(AnswerTierTest, ABucketsVectorLogIsReadFromWhereAReaderStopped) {
  using Log = cache::SharedStore::VectorLog;
  // Records are bytes: NULs, spaces and newlines inside them do not confuse the reply.
  const std::string first("a\0 b\nc", 7);
  tiers_[0]->append_vector("faq", "g:a", key(20), first, 60s);
  tiers_[0]->append_vector("faq", "g:a", key(20), "second", 60s);
  flush(0);
  const Log all = run(tiers_[1]->vectors_after("faq", "g:a", key(20), {}, 1024)).value_or(Log{});
  ASSERT_EQ(all.records.size(), 2u);
  EXPECT_EQ(all.records[0], first);
  EXPECT_EQ(all.records[1], "second");
  EXPECT_NE(all.last, cache::LogPosition{});

  // From there on, only what came after; nothing new leaves the position where it was.
  const Log none = run(tiers_[1]->vectors_after("faq", "g:a", key(20), all.last, 1024)).value();
  EXPECT_TRUE(none.records.empty());
  EXPECT_EQ(none.last, all.last);
  tiers_[1]->append_vector("faq", "g:a", key(20), "third", 60s);
  flush(1);
  const Log next = run(tiers_[0]->vectors_after("faq", "g:a", key(20), all.last, 1024)).value();
  ASSERT_EQ(next.records.size(), 1u);
  EXPECT_EQ(next.records[0], "third");
  EXPECT_GT(next.last, all.last);
  // At most `max` at a time, oldest first.
  const Log one = run(tiers_[0]->vectors_after("faq", "g:a", key(20), {}, 1)).value();
  ASSERT_EQ(one.records.size(), 1u);
  EXPECT_EQ(one.records[0], first);

  // Another tenant's or route's bucket of the same key is another log.
  EXPECT_TRUE(
      run(tiers_[0]->vectors_after("faq", "g:b", key(20), {}, 1024)).value().records.empty());
  EXPECT_TRUE(
      run(tiers_[0]->vectors_after("faq2", "g:a", key(20), {}, 1024)).value().records.empty());
}

TEST_F(AnswerTierTest, AVectorLogKeepsItsNewestAndLivesFromItsLast) {
  for (std::size_t i = 0; i < cache::SemanticIndex::kMaxBucketVectors + 5; ++i) {
    tiers_[0]->append_vector("faq", "g:a", key(21), "r" + std::to_string(i), 60s);
    if (i % 256 == 255) {
      flush(0);  // fewer than Commands::kMaxWaiting unanswered at once
    }
  }
  flush(0);
  const auto log = run(tiers_[1]->vectors_after("faq", "g:a", key(21), {}, 2048)).value();
  ASSERT_EQ(log.records.size(), cache::SemanticIndex::kMaxBucketVectors);
  EXPECT_EQ(log.records.front(), "r5");
  EXPECT_EQ(log.records.back(), "r" + std::to_string(cache::SemanticIndex::kMaxBucketVectors + 4));

  tiers_[0]->append_vector("faq", "g:a", key(22), "short-lived", 1ms);
  flush(0);
  std::size_t left = 1;
  for (int i = 0; i < 100 && left > 0; ++i) {
    left = run(tiers_[1]->vectors_after("faq", "g:a", key(22), {}, 8)).value().records.size();
    if (left > 0) ioc_.run_for(5ms);
  }
  EXPECT_EQ(left, 0u);
}

TEST_F(AnswerTierTest, ARouteOrTenantPurgeDropsItsVectorLogs) {
  tiers_[0]->append_vector("faq", "g:a", key(23), "a", 60s);
  tiers_[0]->append_vector("faq", "g:b", key(23), "b", 60s);
  flush(0);
  std::string error;
  EXPECT_EQ(purge_matching(settings_,
                           AnswerTier::purge_pattern(settings_.key_prefix, "faq", "g:a", {},
                                                     AnswerTier::Records::kVectorLogs),
                           5s, error),
            1u)
      << error;
  EXPECT_TRUE(run(tiers_[1]->vectors_after("faq", "g:a", key(23), {}, 8)).value().records.empty());
  EXPECT_EQ(run(tiers_[1]->vectors_after("faq", "g:b", key(23), {}, 8)).value().records.size(), 1u);
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
