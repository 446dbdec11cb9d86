#include "redis/connection.h"

#include <cstdlib>
#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <gtest/gtest.h>

#include "redis_test_settings.h"

// Name resolution of RedisConnection against a real redis-server (SLUICE_TEST_REDIS_URL);
// skipped without one.
namespace sluice::redis {
namespace {

using namespace std::chrono_literals;

// A resolver that answers only when the test says so: a slow DNS.
struct HeldResolver {
  std::vector<std::string> asked;
  RedisConnection::Resolved answer;

  RedisConnection::Resolver get() {
    return [this](const std::string& host, RedisConnection::Resolved done) {
      asked.push_back(host);
      answer = std::move(done);
    };
  }
};

class RedisConnectionTest : public ::testing::Test {
 protected:
  // The settings of SLUICE_TEST_REDIS_URL with its address replaced by a host name that only
  // the test's resolver knows.
  void SetUp() override {
    std::optional<config::StateSettings> settings = test_redis_settings();
    if (!settings) {
      GTEST_SKIP() << "SLUICE_TEST_REDIS_URL is not set (scripts/test-services.sh)";
    }
    settings_ = *settings;
    settings_.redis_host = "redis.sluice-test.invalid";
  }

  // Runs the loop until `done()` (bounded: two seconds).
  template <typename Pred>
  void run_until(Pred done) {
    ioc_.restart();
    for (int i = 0; i < 200 && !done(); ++i) {
      ioc_.run_one_for(10ms);
    }
  }

  config::StateSettings settings_;
  boost::asio::io_context ioc_;
  HeldResolver dns_;
};

TEST_F(RedisConnectionTest, AHostNameIsResolvedOffTheLoopAndHiredisGetsTheAddress) {
  bool ready = false;
  RedisConnection connection(
      ioc_, settings_, [&] { ready = true; }, [](std::string_view) {}, dns_.get());
  connection.start();
  // While the name is being looked up the loop serves other work, and nothing connects.
  bool ticked = false;
  boost::asio::steady_timer tick(ioc_, 20ms);
  tick.async_wait([&](boost::system::error_code) { ticked = true; });
  run_until([&] { return ticked; });
  EXPECT_TRUE(ticked);
  ASSERT_EQ(dns_.asked, std::vector<std::string>{"redis.sluice-test.invalid"});
  EXPECT_FALSE(connection.connected());
  dns_.answer("127.0.0.1", "");
  run_until([&] { return ready; });
  EXPECT_TRUE(ready);
  EXPECT_TRUE(connection.connected());
}

TEST_F(RedisConnectionTest, AFailedLookupIsReportedAndRetried) {
  std::string why;
  RedisConnection connection(
      ioc_, settings_, [] {}, [&](std::string_view w) { why = w; }, dns_.get());
  connection.start();
  ASSERT_EQ(dns_.asked.size(), 1u);
  dns_.answer("", "Name or service not known");
  EXPECT_EQ(why, "cannot resolve redis.sluice-test.invalid: Name or service not known");
  run_until([&] { return dns_.asked.size() == 2; });
  EXPECT_EQ(dns_.asked.size(), 2u) << "no new lookup after the reconnect backoff";
}

TEST_F(RedisConnectionTest, TheDefaultResolverFindsLocalhost) {
  settings_.redis_host = "localhost";
  bool ready = false;
  RedisConnection connection(
      ioc_, settings_, [&] { ready = true; }, [](std::string_view) {});
  connection.start();
  run_until([&] { return ready; });
  EXPECT_TRUE(connection.connected());
}

}  // namespace
}  // namespace sluice::redis
