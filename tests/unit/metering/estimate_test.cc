#include "metering/estimate.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/time_zone.h"

namespace sluice::metering {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr std::string_view kCatalogue = R"(catalogue: est
date: "2026-11-30"
versions:
  - id: e1
    effective_from: 2026-01-01T00:00:00Z
    prices:
      - { adapter: openai, model: gpt-x, input: 2, cache_read: 0.5, output: 8 }
      - { adapter: anthropic, model: claude-x, input: 3, output: 15 }
      - { adapter: gemini, model: tiny, input: 0.125, output: 0 }
)";

class EstimateTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto book = load_price_book(kCatalogue, "est.yaml");
    ASSERT_TRUE(book.has_value()) << book.error().message();
    book_ = *book;
    input_.at_ms = parse_rfc3339_ms("2026-06-01T00:00:00Z").value();
  }
  std::shared_ptr<const PriceBook> book_;
  EstimateInput input_;
};

TEST_F(EstimateTest, PerCallDailyAndMonthlyAsExactDecimals) {
  input_.model = "gpt-x";
  input_.adapter = "openai";
  input_.input_tokens = 1000;
  input_.cache_read_tokens = 400;
  input_.output_tokens = 500;
  input_.calls_per_day = 1000;
  auto e = estimate_cost(*book_, input_);
  ASSERT_TRUE(e.has_value());
  ASSERT_TRUE(e->priced);
  // 600 x 2 + 400 x 0.5 + 500 x 8 per million = 0.0012 + 0.0002 + 0.004.
  EXPECT_EQ(e->per_call_exact, "0.0054");
  EXPECT_EQ(e->per_call.micros, 5400);
  EXPECT_EQ(e->daily_exact, "5.4");
  EXPECT_EQ(e->monthly_exact, "162");
  EXPECT_EQ(e->monthly_micros, 162'000'000);
  const std::string text = format_estimate(*book_, input_, *e);
  EXPECT_THAT(text, HasSubstr("model:          gpt-x (adapter kind openai)\n"));
  EXPECT_THAT(text, HasSubstr("price version:  e1\n"));
  EXPECT_THAT(text, HasSubstr("per call:       0.0054 USD\n"));
  EXPECT_THAT(text, HasSubstr("per day:        5.4 USD (1000 calls)\n"));
  EXPECT_THAT(text, HasSubstr("per month:      162 USD (30 days)\n"));
  EXPECT_THAT(text, HasSubstr(R"("name":"cache_read","tokens":400)"));
}

TEST_F(EstimateTest, VolumesMultiplyTheUnroundedPerCallAmount) {
  // 1 token at 0.125 per million: 0.000000125 per call, recorded as 0 micros per call, but a
  // million calls a day cost 0.125 a day and 3.75 a month.
  input_.model = "tiny";
  input_.input_tokens = 1;
  input_.calls_per_day = 1'000'000;
  auto e = estimate_cost(*book_, input_);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->adapter, "gemini");  // found by trying the adapter kinds in order
  EXPECT_EQ(e->per_call_exact, "0.000000125");
  EXPECT_EQ(e->per_call.micros, 0);
  EXPECT_EQ(e->daily_exact, "0.125");
  EXPECT_EQ(e->monthly_exact, "3.75");
  EXPECT_THAT(
      format_estimate(*book_, input_, *e),
      HasSubstr("per call:       0.000000125 USD (recorded per call as 0, rounded half up)"));
}

TEST_F(EstimateTest, UnaccountedModelSaysSoAndIsNotZero) {
  input_.model = "gpt-unknown";
  input_.input_tokens = 10;
  auto e = estimate_cost(*book_, input_);
  ASSERT_TRUE(e.has_value());
  EXPECT_FALSE(e->priced);
  const std::string text = format_estimate(*book_, input_, *e);
  EXPECT_THAT(text, HasSubstr("model gpt-unknown is UNACCOUNTED"));
  EXPECT_THAT(text, HasSubstr("under any adapter kind (tried openai anthropic gemini"));
  EXPECT_THAT(text, HasSubstr("not as zero"));
  EXPECT_THAT(text, Not(HasSubstr("per call:")));

  input_.model = "claude-x";
  input_.adapter = "openai";  // priced only under anthropic
  e = estimate_cost(*book_, input_);
  EXPECT_FALSE(e->priced);
  EXPECT_THAT(format_estimate(*book_, input_, *e),
              HasSubstr("under adapter kind openai in version e1"));

  input_.at_ms = parse_rfc3339_ms("2025-01-01T00:00:00Z").value();
  input_.adapter = "anthropic";
  e = estimate_cost(*book_, input_);
  EXPECT_FALSE(e->priced);
  EXPECT_THAT(format_estimate(*book_, input_, *e), HasSubstr("no price version in effect"));
}

TEST_F(EstimateTest, CacheReadsAbovePromptAreRefused) {
  input_.model = "gpt-x";
  input_.input_tokens = 10;
  input_.cache_read_tokens = 11;
  EXPECT_FALSE(estimate_cost(*book_, input_).has_value());
}

}  // namespace
}  // namespace sluice::metering
