#include "metering/decimal.h"

#include <gtest/gtest.h>

namespace sluice::metering {
namespace {

Decimal parse(std::string_view text, unsigned digits = 6) {
  std::string why;
  auto d = Decimal::parse(text, digits, 1'000'000, &why);
  EXPECT_TRUE(d.has_value()) << text << ": " << why;
  return d.value_or(Decimal());
}

TEST(DecimalTest, ParsesExactlyWithoutFloatingPoint) {
  EXPECT_EQ((parse("0.1") + parse("0.2")).to_string(), "0.3");
  EXPECT_EQ(parse("2.50").to_string(), "2.5");
  EXPECT_EQ(parse("3.").to_string(), "3");
  EXPECT_EQ(parse("0.000001").round_to(6), 1);
  EXPECT_EQ(parse("0.0000010").round_to(6), 1);  // trailing zeros beyond the limit are fine
  EXPECT_EQ(parse("1000000").round_to(6), 1'000'000'000'000);
  EXPECT_EQ(parse("0").to_string(), "0");
}

TEST(DecimalTest, RejectsWhatCannotBeHeldExactly) {
  for (const char* bad : {"0.0000001", "1e-6", "-1", ".5", "", "1,5", "0x10", " 1", "1.2.3",
                          "1000001", "99999999999999999999999"}) {
    std::string why;
    EXPECT_FALSE(Decimal::parse(bad, 6, 1'000'000, &why).has_value()) << bad;
    EXPECT_FALSE(why.empty()) << bad;
  }
}

TEST(DecimalTest, RoundsHalfUpOnce) {
  EXPECT_EQ(Decimal(5, 7).round_to(6), 1);         // 0.0000005 -> 0.000001
  EXPECT_EQ(Decimal(4999999, 13).round_to(6), 0);  // 0.0000004999999 -> 0
  EXPECT_EQ(Decimal(15, 7).round_to(6), 2);        // 0.0000015 -> 0.000002 (half up, not even)
  EXPECT_EQ(Decimal(25, 7).round_to(6), 3);
  EXPECT_EQ(Decimal(7, 0).round_to(6), 7'000'000);
}

TEST(DecimalTest, TimesKeepsEveryDigit) {
  // 2^64-1 tokens at 100000.000001 per Mtok, less 12.3456% four times over: no overflow,
  // no lost digit, and the value still rounds (it does not fit in int64 micros: nullopt).
  Decimal d = Decimal::from_integer(UINT64_MAX).times(100'000'000'001, 12);
  for (int i = 0; i < 13; ++i) {
    d = d.times(876'544, 6);
  }
  EXPECT_FALSE(d.round_to(6).has_value());
  EXPECT_EQ(Decimal::from_integer(3).times(125'000, 12).to_string(), "0.000000375");
  EXPECT_EQ(Decimal(1, 0).times(900'000, 6).times(500'000, 6).to_string(), "0.45");
}

TEST(DecimalTest, PrintsExactlyWithoutTrailingZeros) {
  EXPECT_EQ(Decimal(0, 5).to_string(), "0");
  EXPECT_EQ(Decimal(100, 2).to_string(), "1");
  EXPECT_EQ(Decimal(1050, 3).to_string(), "1.05");
  EXPECT_EQ(Decimal(5, 7).to_string(), "0.0000005");
  EXPECT_EQ(Decimal(10'000'000'000'000'000'000ULL, 19).to_string(), "1");
  EXPECT_EQ(Decimal(1, 25).to_string(), "0.0000000000000000000000001");
  EXPECT_EQ(Decimal::from_integer(UINT64_MAX).times(UINT64_MAX).to_string(),
            "340282366920938463426481119284349108225");
  std::string out = "x=";
  Decimal(125, 3).append_to(out);
  EXPECT_EQ(out, "x=0.125");
}

TEST(DecimalTest, FormatsMicros) {
  EXPECT_EQ(format_micros(0), "0");
  EXPECT_EQ(format_micros(1), "0.000001");
  EXPECT_EQ(format_micros(6'000), "0.006");
  EXPECT_EQ(format_micros(180'000'000), "180");
  EXPECT_EQ(format_micros(-1'500'000), "-1.5");
}

}  // namespace
}  // namespace sluice::metering
