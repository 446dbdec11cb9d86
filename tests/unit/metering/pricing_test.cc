#include "metering/pricing.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/time_zone.h"
#include "metering/default_prices.h"

namespace sluice::metering {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

constexpr std::string_view kCatalogue = R"(catalogue: test
date: "2026-11-30"
versions:
  - id: v1
    effective_from: 2026-01-01T00:00:00Z
    prices:
      - { adapter: openai, model: gpt-test, input: 2, output: 8, cache_read: 0.5, cache_write: 2.5 }
      - { adapter: openai, model: o-test, input: 1, output: 4, reasoning: 3 }
      - { adapter: openai, model: nocache-test, input: 2, output: 8 }
      - adapter: gemini
        model: pro-test
        input: 1.25
        cache_read: 0.125
        output: 10
        tiers:
          - { above_input_tokens: 200000, input: 2.5, cache_read: 0.25, output: 15 }
      - { adapter: openai, model: embed-test, kind: embeddings, input: 0.02 }
      - { adapter: openai, model: fee-test, input: 1, output: 0, per_request: 0.001 }
      - { adapter: openai_compatible, model: llama-local, input: 0, output: 0 }
      - { adapter: openai, model: tiny-test, input: 0.4, output: 0.4 }
      - { adapter: openai, model: snap-, match: prefix, input: 1, output: 1 }
      - { adapter: openai, model: snap-exact, input: 7, output: 7 }
      - { provider: special, model: gpt-test, input: 1, output: 1 }
      - adapter: openai_compatible
        model: offpeak-test
        input: 1
        output: 1
        windows:
          - { name: off-peak, time_zone: UTC, days: weekdays, from: "22:00", to: "06:00", discount_percent: 50 }
      - adapter: openai_compatible
        model: ny-test
        input: 1
        output: 1
        windows:
          - { name: ny-office, time_zone: America/New_York, days: [mon, tue, wed, thu, fri], from: "09:00", to: "17:00", discount_percent: 20 }
  - id: v2
    effective_from: 2027-06-01T10:00:00Z
    prices:
      - { adapter: openai, model: gpt-test, input: 3, output: 9 }
)";

std::int64_t at(std::string_view rfc3339) { return parse_rfc3339_ms(rfc3339).value(); }

class PricingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto book = load_price_book(kCatalogue, "test.yaml");
    ASSERT_TRUE(book.has_value()) << book.error().message();
    book_ = *book;
  }

  Charge charge(std::string_view adapter, std::string_view model, ir::Usage usage,
                std::string_view when = "2026-03-02T12:00:00Z", std::string_view provider = "p") {
    ChargeInput in;
    in.provider = provider;
    in.adapter = adapter;
    in.model = model;
    in.operation = "chat";
    in.usage = usage;
    in.usage_reported = true;
    in.entered_at_ms = at(when);
    return book_->charge(in);
  }

  std::shared_ptr<const PriceBook> book_;
};

ir::Usage io(std::uint64_t input, std::uint64_t output) {
  ir::Usage u;
  u.input_tokens = input;
  u.output_tokens = output;
  return u;
}

TEST_F(PricingTest, VersionSwitchesAtTheExactInstant) {
  const Charge before = charge("openai", "gpt-test", io(1'000'000, 0), "2027-06-01T09:59:59.999Z");
  EXPECT_TRUE(before.priced);
  EXPECT_EQ(before.price_version, "v1");
  EXPECT_EQ(before.micros, 2'000'000);
  const Charge after = charge("openai", "gpt-test", io(1'000'000, 0), "2027-06-01T10:00:00.000Z");
  EXPECT_EQ(after.price_version, "v2");
  EXPECT_EQ(after.micros, 3'000'000);
}

TEST_F(PricingTest, AShareOfAChargeScalesTheExactTotalAndRoundsOnce) {
  const Charge full = charge("openai", "gpt-test", io(1'000'000, 0));
  const Charge quarter = share_of(full, 25);
  EXPECT_TRUE(quarter.priced);
  EXPECT_EQ(quarter.price_version, "v1");
  EXPECT_EQ(quarter.currency, full.currency);
  EXPECT_EQ(quarter.micros, 500'000);
  EXPECT_EQ(quarter.exact_total, "0.5");
  EXPECT_THAT(quarter.items_json, StartsWith("{\"share_percent\":25,\"of\":{"));
  // 3 tokens at 0.4 per million: 1.2 micro-units exactly; half is 0.6, rounded once to 1.
  const Charge half = share_of(charge("openai", "tiny-test", io(3, 0)), 50);
  EXPECT_EQ(half.exact_total, "0.0000006");
  EXPECT_EQ(half.micros, 1);
  EXPECT_EQ(share_of(full, 0).micros, 0);
  EXPECT_EQ(share_of(full, 100).micros, full.micros);
}

TEST_F(PricingTest, AShareOfAnUnpricedChargeIsUnpriced) {
  const Charge unknown = charge("openai", "no-such-model", io(1000, 1000));
  ASSERT_FALSE(unknown.priced);
  const Charge share = share_of(unknown, 50);
  EXPECT_FALSE(share.priced);
  EXPECT_EQ(share.micros, 0);
}

TEST_F(PricingTest, RequestEnteringBeforeAChangePaysTheOldPriceWhenItEndsAfter) {
  // Entered 09:59, finished 10:02 after the 10:00 change: only the entry time counts.
  const Charge c = charge("openai", "gpt-test", io(1'000'000, 1'000'000), "2027-06-01T09:59:00Z");
  EXPECT_EQ(c.price_version, "v1");
  EXPECT_EQ(c.micros, 10'000'000);
  EXPECT_THAT(c.items_json, HasSubstr("\"version\":\"v1\""));
}

TEST_F(PricingTest, BeforeTheFirstVersionIsUnaccounted) {
  const Charge c = charge("openai", "gpt-test", io(10, 10), "2025-12-31T23:59:59.999Z");
  EXPECT_FALSE(c.priced);
  EXPECT_EQ(c.micros, 0);
  EXPECT_THAT(c.items_json, HasSubstr("no_price_version_in_effect"));
}

TEST_F(PricingTest, CacheReadAndWriteAreSubItemsOfInput) {
  ir::Usage u = io(1000, 500);
  u.cache_read_tokens = 300;
  u.cache_write_tokens = 200;
  const Charge c = charge("openai", "gpt-test", u);
  ASSERT_TRUE(c.priced);
  // 500 x 2 + 300 x 0.5 + 200 x 2.5 + 500 x 8 per million = 0.001 + 0.00015 + 0.0005 + 0.004.
  EXPECT_EQ(c.micros, 5650);
  EXPECT_THAT(
      c.items_json,
      HasSubstr(R"({"name":"input","tokens":500,"rate":"2","amount":"0.001","rule":"base"})"));
  EXPECT_THAT(
      c.items_json,
      HasSubstr(
          R"({"name":"cache_read","tokens":300,"rate":"0.5","amount":"0.00015","rule":"base"})"));
  EXPECT_THAT(
      c.items_json,
      HasSubstr(
          R"({"name":"cache_write","tokens":200,"rate":"2.5","amount":"0.0005","rule":"base"})"));
  EXPECT_THAT(c.items_json, HasSubstr(R"("total":"0.00565","micros":5650,"rounding":"half_up")"));
}

TEST_F(PricingTest, CacheWithoutItsOwnRateIsChargedAtTheInputRateAndSaysSo) {
  ir::Usage u = io(1000, 0);
  u.cache_read_tokens = 400;
  const Charge c = charge("openai", "nocache-test", u);
  EXPECT_EQ(c.micros, 2000);
  EXPECT_THAT(c.items_json, HasSubstr("input_rate:no_cache_read_rate"));
}

TEST_F(PricingTest, CacheTokensAboveInputAreClampedAndFlagged) {
  ir::Usage u = io(100, 0);
  u.cache_read_tokens = 150;
  const Charge c = charge("openai", "gpt-test", u);
  EXPECT_TRUE(c.priced);
  EXPECT_EQ(c.micros, 75);  // 150 x 0.5 per million; uncached input clamped to 0
  EXPECT_THAT(c.items_json, HasSubstr(R"("name":"input","tokens":0)"));
  EXPECT_THAT(c.items_json, HasSubstr(R"("anomalies":["cache_tokens_exceed_input"])"));
}

TEST_F(PricingTest, ReasoningWithItsOwnRateIsSplitOutOfOutput) {
  ir::Usage u = io(0, 1000);
  u.reasoning_tokens = 600;
  const Charge c = charge("openai", "o-test", u);
  EXPECT_EQ(c.micros, 3400);  // 400 x 4 + 600 x 3
  EXPECT_THAT(c.items_json, HasSubstr(R"({"name":"output","tokens":400,"rate":"4")"));
  EXPECT_THAT(c.items_json, HasSubstr(R"({"name":"reasoning","tokens":600,"rate":"3")"));
}

TEST_F(PricingTest, ReasoningWithoutARateIsPaidAsOutput) {
  ir::Usage u = io(0, 1000);
  u.reasoning_tokens = 600;
  const Charge c = charge("openai", "gpt-test", u);
  EXPECT_EQ(c.micros, 8000);
  EXPECT_THAT(
      c.items_json,
      HasSubstr(R"("tokens":1000,"rate":"8","amount":"0.008","rule":"base:includes_reasoning")"));
  EXPECT_THAT(c.items_json, Not(HasSubstr("\"reasoning\"")));
}

TEST_F(PricingTest, ReasoningAboveOutputIsClampedAndFlagged) {
  ir::Usage u = io(0, 100);
  u.reasoning_tokens = 300;
  const Charge c = charge("openai", "o-test", u);
  EXPECT_EQ(c.micros, 900);  // 0 x 4 + 300 x 3
  EXPECT_THAT(c.items_json, HasSubstr("reasoning_tokens_exceed_output"));
}

TEST_F(PricingTest, TierAppliesStrictlyAboveItsThresholdToTheWholeRequest) {
  const Charge at_threshold = charge("gemini", "pro-test", io(200'000, 1000));
  EXPECT_EQ(at_threshold.micros, 260'000);  // 200000 x 1.25 + 1000 x 10
  EXPECT_THAT(at_threshold.items_json, Not(HasSubstr("\"tier\"")));
  const Charge above = charge("gemini", "pro-test", io(200'001, 1000));
  // 200001 x 2.5 + 1000 x 15 = 0.5000025 + 0.015; half up to micros.
  EXPECT_EQ(above.micros, 515'003);
  EXPECT_THAT(above.items_json, HasSubstr(R"("tier":"tier:input>200000")"));
  EXPECT_THAT(above.items_json, HasSubstr(R"("total":"0.5150025")"));
  EXPECT_THAT(above.items_json,
              HasSubstr(R"("rate":"15","amount":"0.015","rule":"tier:input>200000")"));
}

TEST_F(PricingTest, TierCountsCachedTokensAsInput) {
  ir::Usage u = io(300'000, 0);
  u.cache_read_tokens = 250'000;
  const Charge c = charge("gemini", "pro-test", u);
  // 50000 x 2.5 + 250000 x 0.25 = 0.125 + 0.0625
  EXPECT_EQ(c.micros, 187'500);
}

TEST_F(PricingTest, RoundsOnceAtTheEndHalfUp) {
  // 1 input + 1 output token at 0.4 per million: 0.0000004 each; rounded per item they would
  // be 0, summed first they are 0.0000008 -> 1 micro.
  EXPECT_EQ(charge("openai", "tiny-test", io(1, 1)).micros, 1);
  EXPECT_EQ(charge("openai", "tiny-test", io(1, 0)).micros, 0);
  // 0.125 x 4 = 0.0000005: exactly half a micro rounds up; 0.125 x 3 rounds down.
  ir::Usage half = io(4, 0);
  half.cache_read_tokens = 4;
  EXPECT_EQ(charge("gemini", "pro-test", half).micros, 1);
  ir::Usage below = io(3, 0);
  below.cache_read_tokens = 3;
  EXPECT_EQ(charge("gemini", "pro-test", below).micros, 0);
  EXPECT_THAT(charge("gemini", "pro-test", below).items_json,
              HasSubstr(R"("total":"0.000000375","micros":0)"));
}

TEST_F(PricingTest, EmbeddingsChargeInputOnly) {
  ir::Usage u = io(1'000'000, 5);
  const Charge c = charge("openai", "embed-test", u);
  EXPECT_TRUE(c.priced);
  EXPECT_EQ(c.micros, 20'000);
  EXPECT_THAT(c.items_json, HasSubstr("output_tokens_on_embeddings_not_charged"));
  EXPECT_THAT(c.items_json, Not(HasSubstr(R"("name":"output")")));
}

TEST_F(PricingTest, PerRequestFeeIsAddedOnce) {
  const Charge c = charge("openai", "fee-test", io(1000, 0));
  EXPECT_EQ(c.micros, 2000);  // 1000 x 1 per million (0.001) + the 0.001 fee
  EXPECT_THAT(c.items_json, HasSubstr(R"({"name":"per_request","amount":"0.001","rule":"base"})"));
}

TEST_F(PricingTest, SelfHostedModelAtPriceZeroIsPricedAtZero) {
  const Charge c = charge("openai_compatible", "llama-local", io(5000, 5000));
  EXPECT_TRUE(c.priced);
  EXPECT_EQ(c.micros, 0);
}

TEST_F(PricingTest, ModelNotInTheCatalogueIsUnaccountedNeverZero) {
  const Charge c = charge("openai", "gpt-unknown", io(1000, 1000));
  EXPECT_FALSE(c.priced);
  EXPECT_EQ(c.micros, 0);
  EXPECT_EQ(c.price_version, "v1");
  EXPECT_THAT(c.items_json, HasSubstr(R"("unaccounted":"model_not_in_catalogue")"));
  EXPECT_THAT(c.items_json, HasSubstr(R"("model":"gpt-unknown")"));
  // Same model name under another adapter kind is not the same price.
  EXPECT_FALSE(charge("anthropic", "gpt-test", io(1, 1)).priced);
}

TEST_F(PricingTest, UsageNotReportedIsUnaccounted) {
  ChargeInput in;
  in.adapter = "openai";
  in.model = "gpt-test";
  in.entered_at_ms = at("2026-03-02T12:00:00Z");
  const Charge c = book_->charge(in);
  EXPECT_FALSE(c.priced);
  EXPECT_THAT(c.items_json, HasSubstr("usage_not_reported"));
}

TEST_F(PricingTest, MatchingPrefersProviderThenExactThenLongestPrefix) {
  EXPECT_EQ(charge("openai", "snap-2026-01-01", io(1'000'000, 0)).micros, 1'000'000);
  EXPECT_EQ(charge("openai", "snap-exact", io(1'000'000, 0)).micros, 7'000'000);
  EXPECT_FALSE(charge("openai", "snap", io(1, 0)).priced);
  EXPECT_EQ(
      charge("openai", "gpt-test", io(1'000'000, 0), "2026-03-02T12:00:00Z", "special").micros,
      1'000'000);
}

TEST_F(PricingTest, WindowIsDecidedByEntryTimeAcrossMidnight) {
  const auto window_of = [&](std::string_view when) {
    return charge("openai_compatible", "offpeak-test", io(1'000'000, 0), when).micros;
  };
  // 2026-11-27 is a Friday, 2026-11-30 a Monday.
  EXPECT_EQ(window_of("2026-11-30T21:59:59Z"), 1'000'000);
  EXPECT_EQ(window_of("2026-11-30T22:00:00Z"), 500'000);
  EXPECT_EQ(window_of("2026-11-30T23:59:58Z"), 500'000);  // keeps its window past midnight
  EXPECT_EQ(window_of("2026-12-01T05:59:59Z"), 500'000);
  EXPECT_EQ(window_of("2026-12-01T06:00:00Z"), 1'000'000);
  // Weekday vs weekend: Friday night's window runs into Saturday morning; Saturday night's and
  // Sunday night's do not open at all.
  EXPECT_EQ(window_of("2026-11-27T23:59:58Z"), 500'000);
  EXPECT_EQ(window_of("2026-11-28T01:00:00Z"), 500'000);
  EXPECT_EQ(window_of("2026-11-28T22:30:00Z"), 1'000'000);
  EXPECT_EQ(window_of("2026-11-30T01:00:00Z"), 1'000'000);
  const Charge c =
      charge("openai_compatible", "offpeak-test", io(1'000'000, 0), "2026-11-30T23:59:58Z");
  EXPECT_THAT(c.items_json, HasSubstr(R"("window":"off-peak")"));
  EXPECT_THAT(
      c.items_json,
      HasSubstr(R"({"name":"off-peak","scope":"window","percent":"50","total_after":"0.5"})"));
}

TEST_F(PricingTest, WindowFollowsTheIanaZoneThroughDaylightSaving) {
  if (!TimeZone::load("America/New_York")) {
    GTEST_SKIP() << "no tzdata";
  }
  const auto ny = [&](std::string_view when) {
    return charge("openai_compatible", "ny-test", io(1'000'000, 0), when).micros;
  };
  EXPECT_EQ(ny("2026-07-01T13:30:00Z"), 800'000);    // 09:30 EDT, Wednesday
  EXPECT_EQ(ny("2026-12-02T13:30:00Z"), 1'000'000);  // 08:30 EST
  EXPECT_EQ(ny("2026-12-02T14:00:00Z"), 800'000);    // 09:00 EST
  EXPECT_EQ(ny("2026-07-04T15:00:00Z"), 1'000'000);  // Saturday
}

TEST(PricingDiscountTest, DiscountsLayerInOrderWindowEntryProviderCatalogue) {
  constexpr std::string_view yaml = R"(catalogue: d
date: "2026-11-30"
versions:
  - id: d1
    effective_from: 2026-01-01T00:00:00Z
    discounts: [{ name: promo, percent: 20 }]
    provider_discounts:
      openai-batch: [{ name: batch, percent: 50 }]
    prices:
      - adapter: openai
        model: m
        input: 1
        output: 0
        discounts: [{ name: negotiated, percent: 10 }]
)";
  auto book = load_price_book(yaml, "d.yaml");
  ASSERT_TRUE(book.has_value()) << book.error().message();
  ChargeInput in;
  in.provider = "openai-batch";
  in.adapter = "openai";
  in.model = "m";
  in.usage.input_tokens = 1'000'000;
  in.usage_reported = true;
  in.entered_at_ms = at("2026-06-01T00:00:00Z");
  const Charge c = (*book)->charge(in);
  // 1 x 0.9 x 0.5 x 0.8 = 0.36: multiplicative layers, not 10 + 50 + 20 = 80% off.
  EXPECT_EQ(c.micros, 360'000);
  const auto pos = [&](std::string_view s) { return c.items_json.find(s); };
  ASSERT_NE(pos(R"("name":"negotiated","scope":"entry","percent":"10","total_after":"0.9")"),
            std::string::npos);
  ASSERT_NE(pos(R"("name":"batch","scope":"provider","percent":"50","total_after":"0.45")"),
            std::string::npos);
  ASSERT_NE(pos(R"("name":"promo","scope":"catalogue","percent":"20","total_after":"0.36")"),
            std::string::npos);
  EXPECT_LT(pos("negotiated"), pos("batch"));
  EXPECT_LT(pos("batch"), pos("promo"));
  // Another provider of the same adapter kind gets no batch discount.
  in.provider = "openai";
  EXPECT_EQ((*book)->charge(in).micros, 720'000);
}

// One catalogue mistake per case: the message names the file, the line and the field.
struct BadCatalogue {
  const char* name;
  std::string entry;  // replaces the price entry of the template (line 6)
  std::string expect;
};

std::string with_entry(const std::string& entry) {
  return "catalogue: bad\n"
         "date: \"2026-11-30\"\n"
         "versions:\n"
         "  - id: v1\n"
         "    effective_from: 2026-01-01T00:00:00Z\n"
         "    prices:\n" +
         entry;
}

TEST(PricingCatalogueErrorTest, EachMistakeIsReportedWithFileAndLine) {
  const std::vector<BadCatalogue> cases = {
      {"too precise", "      - { adapter: openai, model: m, input: 0.0000001, output: 1 }\n",
       "bad.yaml:7:45: versions[0].prices[0].input: more than 6 decimal places"},
      {"exponent", "      - { adapter: openai, model: m, input: 1e-6, output: 1 }\n",
       "bad.yaml:7:45: versions[0].prices[0].input: expected a plain decimal"},
      {"negative", "      - { adapter: openai, model: m, input: -1, output: 1 }\n",
       "bad.yaml:7:45: versions[0].prices[0].input: expected a plain decimal"},
      {"unknown field", "      - { adapter: openai, model: m, inptu: 1, output: 1 }\n",
       "bad.yaml:7:38: versions[0].prices[0].inptu: unknown field; did you mean \"input\"?"},
      {"missing output", "      - { adapter: openai, model: m, input: 1 }\n",
       "bad.yaml:7:9: versions[0].prices[0].output: missing required field output"},
      {"no scope", "      - { model: m, input: 1, output: 1 }\n",
       "bad.yaml:7:9: versions[0].prices[0]: an entry names an adapter kind, a provider id"},
      {"bad match", "      - { adapter: openai, model: m, match: glob, input: 1, output: 1 }\n",
       "bad.yaml:7:45: versions[0].prices[0].match: expected exact or prefix"},
      {"bad currency",
       "      - { adapter: openai, model: m, currency: usd, input: 1, output: 1 }\n",
       "versions[0].prices[0].currency: expected an ISO 4217 code"},
      {"fee too large",
       "      - { adapter: openai, model: m, input: 1, output: 1, per_request: 5000 }\n",
       "versions[0].prices[0].per_request: must be at most 1000"},
      {"embeddings with output",
       "      - { adapter: openai, model: m, kind: embeddings, input: 1, output: 1 }\n",
       "bad.yaml:7:74: versions[0].prices[0].output: an embeddings entry is priced on input"},
      {"tiers out of order",
       "      - adapter: openai\n"
       "        model: m\n"
       "        input: 1\n"
       "        output: 1\n"
       "        tiers:\n"
       "          - { above_input_tokens: 200000, input: 2 }\n"
       "          - { above_input_tokens: 100000, input: 3 }\n",
       "bad.yaml:13:35: versions[0].prices[0].tiers[1].above_input_tokens: tiers must be listed by "
       "ascending threshold"},
      {"bad time zone",
       "      - adapter: openai\n"
       "        model: m\n"
       "        input: 1\n"
       "        output: 1\n"
       "        windows:\n"
       "          - { name: w, time_zone: Mars/Base, from: \"22:00\", to: \"06:00\", "
       "discount_percent: 50 }\n",
       "bad.yaml:12:35: versions[0].prices[0].windows[0].time_zone: unknown time zone"},
      {"bad clock",
       "      - adapter: openai\n"
       "        model: m\n"
       "        input: 1\n"
       "        output: 1\n"
       "        windows:\n"
       "          - { name: w, time_zone: UTC, from: \"25:00\", to: \"06:00\", "
       "discount_percent: 50 }\n",
       "bad.yaml:12:46: versions[0].prices[0].windows[0].from: must be between 00:00 and 23:59"},
      {"empty window",
       "      - adapter: openai\n"
       "        model: m\n"
       "        input: 1\n"
       "        output: 1\n"
       "        windows:\n"
       "          - { name: w, time_zone: UTC, days: weekends, from: \"06:00\", to: \"06:00\", "
       "discount_percent: 50 }\n",
       "versions[0].prices[0].windows[0].to: must differ from `from`"},
      {"bad day",
       "      - adapter: openai\n"
       "        model: m\n"
       "        input: 1\n"
       "        output: 1\n"
       "        windows:\n"
       "          - { name: w, time_zone: UTC, days: [mon, funday], from: \"01:00\", to: "
       "\"02:00\", "
       "discount_percent: 50 }\n",
       "bad.yaml:12:52: versions[0].prices[0].windows[0].days[1]: expected one of sun"},
      {"percent over 100",
       "      - { adapter: openai, model: m, input: 1, output: 1, discounts: [{ name: x, percent: "
       "101 }] }\n",
       "versions[0].prices[0].discounts[0].percent: must be at most 100"},
      {"duplicate entry",
       "      - { adapter: openai, model: m, input: 1, output: 1 }\n"
       "      - { adapter: openai, model: m, input: 2, output: 2 }\n",
       "bad.yaml:8:9: versions[0].prices[1]: repeats the entry at line 7"},
      {"invalid yaml", "      - { adapter: openai, model: m, input: 1, output: 1\n",
       "bad.yaml:8:1: invalid YAML"},
  };
  for (const BadCatalogue& c : cases) {
    auto book = load_price_book(with_entry(c.entry), "bad.yaml");
    ASSERT_FALSE(book.has_value()) << c.name;
    EXPECT_THAT(book.error().message(), HasSubstr(c.expect)) << c.name;
    EXPECT_THAT(book.error().message(), StartsWith("bad.yaml:")) << c.name;
  }
}

TEST(PricingCatalogueErrorTest, VersionMistakes) {
  const std::string entry = "    prices: [{ adapter: openai, model: m, input: 1, output: 1 }]\n";
  const auto load = [](const std::string& text) {
    auto book = load_price_book(text, "v.yaml");
    return book ? std::string("loaded") : book.error().message();
  };
  EXPECT_THAT(load("catalogue: c\ndate: 2026-11-30\nversions:\n"
                   "  - id: a\n    effective_from: 2026-01-01T00:00:00\n" +
                   entry),
              HasSubstr("v.yaml:5:21: versions[0].effective_from: invalid RFC 3339"));
  EXPECT_THAT(load("catalogue: c\ndate: 2026-11-30\nversions:\n"
                   "  - id: a\n    effective_from: 2026-02-01T00:00:00Z\n" +
                   entry + "  - id: b\n    effective_from: 2026-01-01T00:00:00Z\n" + entry),
              HasSubstr("v.yaml:7:5: versions[1]: versions must be listed by strictly ascending"));
  EXPECT_THAT(load("catalogue: c\ndate: 2026-11-30\nversions:\n"
                   "  - id: a\n    effective_from: 2026-01-01T00:00:00Z\n" +
                   entry + "  - id: a\n    effective_from: 2026-02-01T00:00:00Z\n" + entry),
              HasSubstr("v.yaml:7:5: versions[1]: version id \"a\" is used twice"));
  EXPECT_THAT(load("catalogue: c\ndate: 2026-11-30\nversions: []\n"),
              HasSubstr("v.yaml:3:11: versions: at least one version is required"));
  EXPECT_THAT(load("catalogue: c\nversions: []\n"),
              HasSubstr("v.yaml:1:1: date: missing required field"));
  EXPECT_THAT(load("catalogue: c\ndate: 30/11/2026\nversions: []\n"),
              HasSubstr("v.yaml:2:7: date: expected a date YYYY-MM-DD"));
  EXPECT_THAT(load("- a\n"), HasSubstr("v.yaml:1:1: expected a mapping"));
}

TEST(DefaultPriceBookTest, EmbeddedCatalogueLoadsAndPricesKnownModels) {
  EXPECT_THAT(default_prices_yaml(), HasSubstr("catalogue: sluice-default"));
  const std::shared_ptr<const PriceBook> book = default_price_book();
  ASSERT_NE(book, nullptr);
  EXPECT_THAT(std::string(book->describe()), HasSubstr("sluice-default"));
  ChargeInput in;
  in.provider = "openai";
  in.adapter = "openai";
  in.model = "gpt-4.1";
  in.usage = io(1000, 500);
  in.usage_reported = true;
  in.entered_at_ms = at("2026-12-01T12:00:00Z");
  // 1000 x $2.00 + 500 x $8.00 per million = $0.002 + $0.004.
  Charge c = book->charge(in);
  ASSERT_TRUE(c.priced) << c.items_json;
  EXPECT_EQ(c.micros, 6000);
  EXPECT_EQ(c.currency, "USD");

  // Claude Sonnet 4.5 snapshot, IR usage (input includes cache tokens): 1000 uncached x $3 +
  // 8000 cache reads x $0.30 + 1000 cache writes x $3.75 + 500 x $15 = 0.01665.
  in.adapter = "anthropic";
  in.model = "claude-sonnet-4-5-20250929";
  in.usage = io(10'000, 500);
  in.usage.cache_read_tokens = 8000;
  in.usage.cache_write_tokens = 1000;
  c = book->charge(in);
  EXPECT_EQ(c.micros, 16'650) << c.items_json;

  // Opus 4.5 is not priced as Opus 4 ($15): the longer prefix wins.
  in.model = "claude-opus-4-5-20251101";
  in.usage = io(1'000'000, 0);
  EXPECT_EQ(book->charge(in).micros, 5'000'000);
  in.model = "claude-opus-4-20250514";
  EXPECT_EQ(book->charge(in).micros, 15'000'000);

  // Gemini 2.5 Pro above 200k input: 250000 x $2.50 + 1000 x $15 = 0.64.
  in.adapter = "gemini";
  in.model = "gemini-2.5-pro";
  in.usage = io(250'000, 1000);
  EXPECT_EQ(book->charge(in).micros, 640'000);

  // The mock adapter has a (fake) price, so demos show a cost.
  in.adapter = "mock";
  in.model = "mock-1";
  in.usage = io(1'000'000, 1'000'000);
  c = book->charge(in);
  EXPECT_TRUE(c.priced);
  EXPECT_EQ(c.micros, 3'000'000);
  in.model = "mock-embed-1";
  in.usage = io(1'000'000, 0);
  EXPECT_EQ(book->charge(in).micros, 100'000);

  in.adapter = "openai";
  in.model = "gpt-4o-mini-tts";  // a variant with other prices is not caught by gpt-4o-mini
  EXPECT_FALSE(book->charge(in).priced);
}

TEST(DefaultPriceBookTest, PricesVertexClaudeByItsVersionedIdsAndGeminiByName) {
  const std::shared_ptr<const PriceBook> book = default_price_book();
  ASSERT_NE(book, nullptr);
  ChargeInput in;
  in.provider = "gcp";
  in.adapter = "vertex";
  in.usage_reported = true;
  in.entered_at_ms = at("2026-12-04T12:00:00Z");
  // Sonnet 4.5 at Anthropic's (global) rates: 1000 uncached x $3 + 8000 cache reads x $0.30 +
  // 1000 cache writes x $3.75 + 500 x $15.
  in.model = "claude-sonnet-4-5@20250929";
  in.usage = io(10'000, 500);
  in.usage.cache_read_tokens = 8000;
  in.usage.cache_write_tokens = 1000;
  Charge c = book->charge(in);
  ASSERT_TRUE(c.priced) << c.items_json;
  EXPECT_EQ(c.micros, 16'650) << c.items_json;
  // Opus 4 (the '@' ends its prefix) is not Opus 4.5's price, nor the reverse.
  in.usage = io(1'000'000, 0);
  in.model = "claude-opus-4@20250514";
  EXPECT_EQ(book->charge(in).micros, 15'000'000);
  in.model = "claude-opus-4-5@20251101";
  EXPECT_EQ(book->charge(in).micros, 5'000'000);
  // Gemini 2.5 Pro's tier over 200k prompt tokens applies to the whole request.
  in.model = "gemini-2.5-pro";
  in.usage = io(100'000, 1000);
  EXPECT_EQ(book->charge(in).micros, 125'000 + 10'000);
  in.usage = io(300'000, 1000);
  EXPECT_EQ(book->charge(in).micros, 750'000 + 15'000);
  in.model = "gemini-2.5-flash-lite";
  EXPECT_FALSE(book->charge(in).priced);
}

TEST(DefaultPriceBookTest, PricesBedrockModelsByIdAndInferenceProfile) {
  const std::shared_ptr<const PriceBook> book = default_price_book();
  ASSERT_NE(book, nullptr);
  ChargeInput in;
  in.provider = "aws";  // no provider entries: priced by adapter kind
  in.adapter = "bedrock";
  in.usage_reported = true;
  in.entered_at_ms = at("2026-12-04T12:00:00Z");

  // Claude Sonnet 4.5 by plain (in-Region) id pays the regional rate, 10% over global: 1000
  // uncached x $3.30 + 8000 cache reads x $0.33 + 1000 cache writes x $4.125 + 500 x $16.50.
  in.model = "anthropic.claude-sonnet-4-5-20250929-v1:0";
  in.usage = io(10'000, 500);
  in.usage.cache_read_tokens = 8000;
  in.usage.cache_write_tokens = 1000;
  Charge c = book->charge(in);
  ASSERT_TRUE(c.priced) << c.items_json;
  EXPECT_EQ(c.micros, 18'315) << c.items_json;
  EXPECT_EQ(c.currency, "USD");
  in.model = "us.anthropic.claude-sonnet-4-5-20250929-v1:0";
  EXPECT_EQ(book->charge(in).micros, 18'315);
  // The global profile pays the global rates ($3 / $0.30 / $3.75 / $15), as Anthropic's API.
  in.model = "global.anthropic.claude-sonnet-4-5-20250929-v1:0";
  EXPECT_EQ(book->charge(in).micros, 16'650);
  // Sonnet 4 has no Bedrock entry, and the Sonnet 4.5 prefix does not catch it.
  in.model = "us.anthropic.claude-sonnet-4-20250514-v1:0";
  EXPECT_FALSE(book->charge(in).priced);

  // Nova Pro through the us. inference profile pays the plain id's rate: 6000 uncached x
  // $0.80 + 4000 cache reads x $0.20 + 1000 x $3.20 = 0.0088.
  in.model = "us.amazon.nova-pro-v1:0";
  in.usage = io(10'000, 1000);
  in.usage.cache_read_tokens = 4000;
  c = book->charge(in);
  ASSERT_TRUE(c.priced) << c.items_json;
  EXPECT_EQ(c.micros, 8'800) << c.items_json;
  in.model = "amazon.nova-pro-v1:0";
  EXPECT_EQ(book->charge(in).micros, 8'800);
  // Nova Micro by plain id: 1M x $0.035 + 1M x $0.14.
  in.model = "amazon.nova-micro-v1:0";
  in.usage = io(1'000'000, 1'000'000);
  EXPECT_EQ(book->charge(in).micros, 175'000);
  // Profiles of other geographies are called from other Regions' prices: unaccounted.
  in.model = "eu.amazon.nova-pro-v1:0";
  EXPECT_FALSE(book->charge(in).priced);
  // The same model names under another adapter kind are not Bedrock's prices.
  in.adapter = "anthropic";
  in.model = "anthropic.claude-sonnet-4-5-20250929-v1:0";
  EXPECT_FALSE(book->charge(in).priced);
}

}  // namespace
}  // namespace sluice::metering
