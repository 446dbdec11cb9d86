#include "tenancy/budget.h"

#include <limits>

#include <boost/json/parse.hpp>
#include <gtest/gtest.h>

#include "core/clock.h"

namespace sluice::tenancy {
namespace {

std::int64_t utc_ms(int y, unsigned mo, unsigned d, int h = 0, int mi = 0) {
  return (days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60) * 1000;
}

TimeZone berlin() {
  // Europe/Berlin's rule, so the test needs no zoneinfo files.
  auto tz = TimeZone::from_posix("CET-1CEST,M3.5.0,M10.5.0/3");
  EXPECT_TRUE(tz.has_value());
  return *tz;
}

store::Budget monthly(std::int64_t amount, store::BudgetMode mode = store::BudgetMode::kHard,
                      std::string zone = "UTC") {
  store::Budget b;
  b.amount_micros = amount;
  b.period = store::BudgetPeriod::kMonthly;
  b.mode = mode;
  b.time_zone = std::move(zone);
  return b;
}

std::int64_t unix_ms(const Clock& clock) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(clock.wall_now().time_since_epoch())
      .count();
}

TEST(BudgetPeriodTest, MonthlyFollowsTheBudgetsTimeZone) {
  const store::Budget b = monthly(1);
  // 2027-01-31T23:30Z: still January in UTC, already February 00:30 in Berlin (CET, +1).
  const std::int64_t t = utc_ms(2027, 1, 31, 23, 30);
  const Period in_utc = budget_period(b, TimeZone(), t);
  EXPECT_EQ(in_utc.start_ms, utc_ms(2027, 1, 1));
  EXPECT_EQ(in_utc.end_ms, utc_ms(2027, 2, 1));
  const Period in_berlin = budget_period(b, berlin(), t);
  EXPECT_EQ(in_berlin.start_ms, utc_ms(2027, 1, 31, 23));  // 2027-02-01T00:00+01:00
  EXPECT_EQ(in_berlin.end_ms, utc_ms(2027, 2, 28, 23));    // 2027-03-01T00:00+01:00
  // Summer time: a month that starts in CEST (+2).
  const Period july = budget_period(b, berlin(), utc_ms(2027, 7, 15));
  EXPECT_EQ(july.start_ms, utc_ms(2027, 6, 30, 22));
  EXPECT_EQ(july.end_ms, utc_ms(2027, 7, 31, 22));
  // December rolls into January of the next year.
  const Period december = budget_period(b, TimeZone(), utc_ms(2027, 12, 31, 23, 59));
  EXPECT_EQ(december.end_ms, utc_ms(2028, 1, 1));
}

TEST(BudgetPeriodTest, CumulativeRunsFromItsStartForever) {
  store::Budget b = monthly(1);
  b.period = store::BudgetPeriod::kCumulative;
  b.starts_at_ms = utc_ms(2026, 3, 4);
  const Period p = budget_period(b, berlin(), utc_ms(2027, 5, 6));
  EXPECT_EQ(p.start_ms, utc_ms(2026, 3, 4));
  EXPECT_EQ(p.end_ms, INT64_MAX);
}

// The monthly reset on the simulated clock: two accounts with the same spend, one counting in
// UTC and one in Berlin, across the 31st 23:30 UTC.
TEST(BudgetAccountTest, MonthlyResetAcrossATimeZoneMonthBoundary) {
  SimulatedClock clock(Clock::Wall::time_point(std::chrono::milliseconds(utc_ms(2027, 1, 20))));
  BudgetAccount in_utc(BudgetAccount::Kind::kGroup, "research", "research", monthly(1000), 1000,
                       TimeZone());
  BudgetAccount in_berlin(BudgetAccount::Kind::kGroup, "research", "research",
                          monthly(1000, store::BudgetMode::kHard, "Europe/Berlin"), 1000, berlin());
  EXPECT_EQ(in_utc.spent(unix_ms(clock)), 0) << "no period started yet";
  EXPECT_FALSE(in_utc.exhausted(unix_ms(clock)));
  ASSERT_TRUE(in_utc.start_period(unix_ms(clock)));
  ASSERT_TRUE(in_berlin.start_period(unix_ms(clock)));
  EXPECT_FALSE(in_utc.start_period(unix_ms(clock))) << "same period: nothing to start";
  for (BudgetAccount* a : {&in_utc, &in_berlin}) {
    a->settle(600);
    a->add(400);
    EXPECT_EQ(a->spent(unix_ms(clock)), 1000);
    EXPECT_TRUE(a->exhausted(unix_ms(clock)));
  }

  clock.set_wall(Clock::Wall::time_point(std::chrono::milliseconds(utc_ms(2027, 1, 31, 23, 30))));
  const std::int64_t now = unix_ms(clock);
  // Before the background thread rolls it, an account past its period admits (spend unknown).
  EXPECT_EQ(in_berlin.spent(now), 0);
  EXPECT_FALSE(in_berlin.exhausted(now));
  EXPECT_TRUE(in_utc.exhausted(now)) << "still January in UTC";
  EXPECT_TRUE(in_berlin.start_period(now));
  EXPECT_FALSE(in_utc.start_period(now));
  EXPECT_EQ(in_berlin.period().start_ms, utc_ms(2027, 1, 31, 23));
  EXPECT_EQ(in_berlin.spent(now), 0);
  in_berlin.add(10);
  EXPECT_EQ(in_berlin.spent(now), 10);

  clock.advance(std::chrono::minutes(30));  // 2027-02-01T00:00Z
  const std::int64_t later = unix_ms(clock);
  EXPECT_FALSE(in_utc.exhausted(later));
  EXPECT_TRUE(in_utc.start_period(later));
  EXPECT_EQ(in_utc.spent(later), 0);
  EXPECT_EQ(in_utc.period().start_ms, utc_ms(2027, 2, 1));
  EXPECT_EQ(in_berlin.spent(later), 10) << "Berlin's February goes on";
}

TEST(BudgetAccountTest, SettleKeepsTheLargerLowerBound) {
  const std::int64_t now = utc_ms(2027, 1, 20);
  BudgetAccount a(BudgetAccount::Kind::kGroup, "g", "g", monthly(10'000), 10'000, TimeZone());
  a.start_period(now);
  a.add(300);
  a.settle(0);  // the ledger has not seen this instance's records yet: they still count
  EXPECT_EQ(a.spent(now), 300);
  a.settle(1000);  // other instances spent more: the ledger wins
  EXPECT_EQ(a.spent(now), 1000);
  a.add(50);
  a.settle(1000);  // this instance's 50 not written yet
  EXPECT_EQ(a.spent(now), 1050);
  a.settle(1050);  // written: counted once, not twice
  EXPECT_EQ(a.spent(now), 1050);
}

// Charges and ledger reads beyond int64 saturate: the account stays exhausted instead of
// wrapping to a negative spend that admits again.
TEST(BudgetAccountTest, SpendBeyondInt64SaturatesAndStaysExhausted) {
  constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
  const std::int64_t now = utc_ms(2027, 1, 20);
  BudgetAccount a(BudgetAccount::Kind::kGroup, "g", "g", monthly(10'000), 10'000, TimeZone());
  a.start_period(now);
  a.add(kMax);
  a.add(kMax);
  EXPECT_EQ(a.spent(now), kMax);
  EXPECT_TRUE(a.exhausted(now));
  a.settle(kMax);
  a.add(1);
  EXPECT_EQ(a.spent(now), kMax);
  a.settle(0);
  EXPECT_EQ(a.spent(now), kMax);
  EXPECT_TRUE(a.exhausted(now));
}

TEST(BudgetAccountTest, ThresholdsAreAnnouncedOncePerPeriod) {
  SimulatedClock clock(Clock::Wall::time_point(std::chrono::milliseconds(utc_ms(2027, 1, 20))));
  BudgetAccount a(BudgetAccount::Kind::kGroup, "g", "g",
                  monthly(1000, store::BudgetMode::kAdvisory), 1000, TimeZone());
  const std::vector<std::uint32_t> thresholds{80, 100};
  a.start_period(unix_ms(clock));
  a.add(799);
  EXPECT_TRUE(a.crossed(thresholds, unix_ms(clock)).empty());
  EXPECT_FALSE(a.exhausted(unix_ms(clock)));
  a.add(1);
  EXPECT_EQ(a.crossed(thresholds, unix_ms(clock)), (std::vector<std::uint32_t>{80}));
  EXPECT_TRUE(a.crossed(thresholds, unix_ms(clock)).empty());
  a.add(5000);  // advisory: never exhausted, however far over
  EXPECT_FALSE(a.exhausted(unix_ms(clock)));
  EXPECT_EQ(a.crossed(thresholds, unix_ms(clock)), (std::vector<std::uint32_t>{100}));
  EXPECT_TRUE(a.crossed(thresholds, unix_ms(clock)).empty());
  clock.set_wall(Clock::Wall::time_point(std::chrono::milliseconds(utc_ms(2027, 2, 1))));
  ASSERT_TRUE(a.start_period(unix_ms(clock)));
  a.add(2000);  // both at once in the new period
  EXPECT_EQ(a.crossed(thresholds, unix_ms(clock)), (std::vector<std::uint32_t>{80, 100}));
}

TEST(BudgetAccountTest, RefusalAndEventNameTheSubjectAndPeriod) {
  const std::int64_t now = utc_ms(2027, 1, 31, 23, 30);
  BudgetAccount key(BudgetAccount::Kind::kKey, "indexer", "research",
                    monthly(5'000'000, store::BudgetMode::kHard, "Europe/Berlin"), 1'500'000,
                    berlin());
  key.start_period(now);
  key.add(1'500'001);
  ASSERT_TRUE(key.exhausted(now));
  const Error e = budget_exhausted(key, now);
  EXPECT_EQ(e.kind(), ErrorKind::kRateLimited);
  EXPECT_EQ(e.http_status(), 429);
  EXPECT_EQ(e.code(), "insufficient_quota");
  EXPECT_EQ(e.message(),
            "budget exhausted: key indexer (its allocation in key group research) has spent "
            "1.500001 of 1.500000 this month (CET-1CEST,M3.5.0,M10.5.0/3; period "
            "2027-01-31T23:00:00Z to 2027-02-28T23:00:00Z)");

  const auto event = boost::json::parse(budget_event_json(key, 100, now, "i-1")).as_object();
  EXPECT_EQ(event.at("type"), "budget.threshold");
  EXPECT_EQ(event.at("subject"), "key");
  EXPECT_EQ(event.at("group"), "research");
  EXPECT_EQ(event.at("key"), "indexer");
  EXPECT_EQ(event.at("threshold_percent").as_int64(), 100);
  EXPECT_EQ(event.at("spent_micros").as_int64(), 1'500'001);
  EXPECT_EQ(event.at("amount_micros").as_int64(), 1'500'000);
  EXPECT_EQ(event.at("mode"), "hard");
  EXPECT_EQ(event.at("period"), "monthly");
  EXPECT_EQ(event.at("period_start"), "2027-01-31T23:00:00Z");
  EXPECT_EQ(event.at("period_end"), "2027-02-28T23:00:00Z");
  EXPECT_EQ(event.at("instance"), "i-1");

  BudgetAccount group(BudgetAccount::Kind::kGroup, "research", "research", monthly(1), 1,
                      TimeZone());
  group.start_period(now);
  const auto group_event = boost::json::parse(budget_event_json(group, 80, now, "i")).as_object();
  EXPECT_TRUE(group_event.at("key").is_null());
}

}  // namespace
}  // namespace sluice::tenancy
