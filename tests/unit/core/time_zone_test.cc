#include "core/time_zone.h"

#include <gtest/gtest.h>

namespace sluice {
namespace {

// Unix seconds of a UTC date-time.
std::int64_t utc(int y, unsigned mo, unsigned d, int h = 0, int mi = 0, int s = 0) {
  return days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + s;
}

TEST(TimeZoneTest, CivilDaysRoundTrip) {
  EXPECT_EQ(days_from_civil(1970, 1, 1), 0);
  EXPECT_EQ(days_from_civil(2000, 3, 1), 11017);
  EXPECT_EQ(days_from_civil(1969, 12, 31), -1);
  for (std::int64_t d = -800000; d < 800000; d += 997) {
    std::int32_t y;
    unsigned m, day;
    civil_from_days(d, y, m, day);
    EXPECT_EQ(days_from_civil(y, m, day), d);
  }
}

TEST(TimeZoneTest, UtcNeedsNoFile) {
  auto tz = TimeZone::load("UTC");
  ASSERT_TRUE(tz.has_value());
  const LocalTime t = tz->local(utc(2026, 11, 28, 23, 59, 58) * 1000 + 999);
  EXPECT_EQ(t.year, 2026);
  EXPECT_EQ(t.month, 11);
  EXPECT_EQ(t.day, 28);
  EXPECT_EQ(t.weekday, 6);  // a Saturday
  EXPECT_EQ(t.second_of_day, 86398);
}

TEST(TimeZoneTest, NegativeInstantsFloor) {
  const LocalTime t = TimeZone().local(-1);  // 1969-12-31T23:59:59.999Z
  EXPECT_EQ(t.year, 1969);
  EXPECT_EQ(t.day, 31);
  EXPECT_EQ(t.weekday, 3);  // Wednesday
  EXPECT_EQ(t.second_of_day, 86399);
}

TEST(TimeZoneTest, PosixRuleNorthernHemisphere) {
  auto tz = TimeZone::from_posix("EST5EDT,M3.2.0,M11.1.0");
  ASSERT_TRUE(tz.has_value());
  // 2026: DST from Sunday March 8, 02:00 EST (07:00Z) to Sunday November 1, 02:00 EDT (06:00Z).
  EXPECT_EQ(tz->offset_at(utc(2026, 3, 8, 6, 59, 59)), -5 * 3600);
  EXPECT_EQ(tz->offset_at(utc(2026, 3, 8, 7)), -4 * 3600);
  EXPECT_EQ(tz->offset_at(utc(2026, 11, 1, 5, 59, 59)), -4 * 3600);
  EXPECT_EQ(tz->offset_at(utc(2026, 11, 1, 6)), -5 * 3600);
}

TEST(TimeZoneTest, PosixRuleSouthernHemisphereAndExplicitTimes) {
  // Sydney: DST from the first Sunday of October to the first Sunday of April, 02:00/03:00.
  auto tz = TimeZone::from_posix("AEST-10AEDT,M10.1.0,M4.1.0/3");
  ASSERT_TRUE(tz.has_value());
  EXPECT_EQ(tz->offset_at(utc(2026, 1, 15)), 11 * 3600);
  EXPECT_EQ(tz->offset_at(utc(2026, 7, 15)), 10 * 3600);
  // 2026-04-05 03:00 AEDT = 2026-04-04T16:00Z.
  EXPECT_EQ(tz->offset_at(utc(2026, 4, 4, 15, 59, 59)), 11 * 3600);
  EXPECT_EQ(tz->offset_at(utc(2026, 4, 4, 16)), 10 * 3600);
}

TEST(TimeZoneTest, PosixRuleFixedAndQuoted) {
  auto india = TimeZone::from_posix("IST-5:30");
  ASSERT_TRUE(india.has_value());
  EXPECT_EQ(india->offset_at(0), 5 * 3600 + 1800);
  auto quoted = TimeZone::from_posix("<-03>3");
  ASSERT_TRUE(quoted.has_value());
  EXPECT_EQ(quoted->offset_at(0), -3 * 3600);
  EXPECT_FALSE(TimeZone::from_posix("X5").has_value());
  EXPECT_FALSE(TimeZone::from_posix("EST5EDT,M13.1.0,M11.1.0").has_value());
  EXPECT_FALSE(TimeZone::from_posix("EST5EDT,M3.2.0").has_value());
}

TEST(TimeZoneTest, IanaFileNewYork) {
  auto tz = TimeZone::load("America/New_York");
  if (!tz) {
    GTEST_SKIP() << tz.error().message();
  }
  // Recorded transitions (2007 rules) and the footer rule far in the future.
  EXPECT_EQ(tz->offset_at(utc(2010, 3, 14, 6, 59, 59)), -5 * 3600);
  EXPECT_EQ(tz->offset_at(utc(2010, 3, 14, 7)), -4 * 3600);
  EXPECT_EQ(tz->offset_at(utc(2026, 3, 8, 7)), -4 * 3600);
  EXPECT_EQ(tz->offset_at(utc(2090, 7, 1)), -4 * 3600);
  EXPECT_EQ(tz->offset_at(utc(2090, 12, 1)), -5 * 3600);
  // Before 1883 New York kept local mean time (-4:56:02).
  EXPECT_EQ(tz->offset_at(utc(1800, 1, 1)), -(4 * 3600 + 56 * 60 + 2));
}

TEST(TimeZoneTest, IanaFileParisWeekdayAcrossMidnight) {
  auto tz = TimeZone::load("Europe/Paris");
  if (!tz) {
    GTEST_SKIP() << tz.error().message();
  }
  // 2026-07-03T21:59:59Z is Friday 23:59:59 in Paris (CEST); one second later, Saturday.
  LocalTime fri = tz->local(utc(2026, 7, 3, 21, 59, 59) * 1000);
  EXPECT_EQ(fri.weekday, 5);
  EXPECT_EQ(fri.second_of_day, 86399);
  LocalTime sat = tz->local(utc(2026, 7, 3, 22) * 1000);
  EXPECT_EQ(sat.weekday, 6);
  EXPECT_EQ(sat.second_of_day, 0);
  EXPECT_EQ(sat.utc_offset_seconds, 7200);
}

TEST(TimeZoneTest, RejectsBadNamesAndData) {
  EXPECT_FALSE(TimeZone::load("../etc/passwd").has_value());
  EXPECT_FALSE(TimeZone::load("/etc/localtime").has_value());
  EXPECT_FALSE(TimeZone::load("Mars/Olympus_Mons").has_value());
  EXPECT_FALSE(TimeZone::from_tzif("TZif2", "x").has_value());
  EXPECT_FALSE(TimeZone::from_tzif(std::string(60, 'x'), "x").has_value());
}

TEST(TimeZoneTest, FormatsRfc3339) {
  EXPECT_EQ(format_rfc3339_ms(0), "1970-01-01T00:00:00Z");
  EXPECT_EQ(format_rfc3339_ms(utc(2026, 11, 30, 10) * 1000 - 1), "2026-11-30T09:59:59.999Z");
  EXPECT_EQ(format_rfc3339_ms(-1), "1969-12-31T23:59:59.999Z");
}

TEST(TimeZoneTest, ParsesRfc3339) {
  EXPECT_EQ(parse_rfc3339_ms("1970-01-01T00:00:00Z").value(), 0);
  EXPECT_EQ(parse_rfc3339_ms("2026-11-30T10:00:00Z").value(), utc(2026, 11, 30, 10) * 1000);
  EXPECT_EQ(parse_rfc3339_ms("2026-11-30T09:59:59.999Z").value(), utc(2026, 11, 30, 10) * 1000 - 1);
  EXPECT_EQ(parse_rfc3339_ms("2026-11-30T09:59:59.5Z").value(),
            utc(2026, 11, 30, 9, 59, 59) * 1000 + 500);
  EXPECT_EQ(parse_rfc3339_ms("2026-11-30T11:00:00+01:00").value(), utc(2026, 11, 30, 10) * 1000);
  EXPECT_EQ(parse_rfc3339_ms("2026-11-30T05:30:00-04:30").value(), utc(2026, 11, 30, 10) * 1000);
  for (const char* bad :
       {"2026-11-30", "2026-11-30T10:00:00", "2026-02-29T00:00:00Z", "2026-11-30T24:00:00Z",
        "2026-11-30T10:00:00.0001Z", "2026-11-30T10:00:00Zjunk", "2026-11-30 10:00:00Z"}) {
    EXPECT_FALSE(parse_rfc3339_ms(bad).has_value()) << bad;
  }
}

}  // namespace
}  // namespace sluice
