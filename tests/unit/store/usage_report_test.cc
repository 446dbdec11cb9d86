// Query parameters and renderings shared by `sluice usage` and the admin usage endpoint.

#include "store/usage_report.h"

#include <boost/json.hpp>
#include <gtest/gtest.h>

namespace sluice::store {
namespace {

using Params = std::vector<std::pair<std::string, std::string>>;

// 2026-11-30T12:00:00Z
constexpr std::int64_t kNow = 1'796'040'000'000;

Result<UsageReportRequest> parse(Params params) { return parse_usage_report(params, kNow); }

std::string error_of(Params params) {
  auto r = parse(std::move(params));
  EXPECT_FALSE(r);
  if (r) {
    return {};
  }
  EXPECT_EQ(r.error().kind(), ErrorKind::kBadRequest);
  return r.error().message();
}

TEST(UsageReportParse, ReadsEveryParameter) {
  auto r = parse({{"by", "key,model,day"},
                  {"since", "7d"},
                  {"until", "2026-11-30T10:00:00Z"},
                  {"key", "team-a"},
                  {"key_group", "research"},
                  {"tenant", "acme"},
                  {"feature", "chat"},
                  {"alias", "fast"},
                  {"provider", "openai"},
                  {"model", "gpt-4o"},
                  {"outcome", "complete"},
                  {"limit", "50"},
                  {"format", "csv"}});
  ASSERT_TRUE(r) << r.error().message();
  const UsageQuery& q = r->query;
  EXPECT_EQ(q.group_by,
            (std::vector<Dimension>{Dimension::kKey, Dimension::kModel, Dimension::kDay}));
  EXPECT_EQ(q.from_ms, kNow - 7 * 86'400'000LL);
  EXPECT_EQ(q.to_ms, kNow - 2 * 3'600'000LL);
  ASSERT_EQ(q.where.size(), 8u);
  EXPECT_EQ(q.where[0], (std::pair<Dimension, std::string>{Dimension::kKey, "team-a"}));
  EXPECT_EQ(q.where[1].first, Dimension::kKeyGroup);
  EXPECT_EQ(q.where[7], (std::pair<Dimension, std::string>{Dimension::kOutcome, "complete"}));
  EXPECT_EQ(q.limit, 50u);
  EXPECT_EQ(r->format, ReportFormat::kCsv);
}

TEST(UsageReportParse, DefaultsAreAllTimeOneTotalRowAsATable) {
  auto r = parse({});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->query.from_ms, 0);
  EXPECT_EQ(r->query.to_ms, INT64_MAX);
  EXPECT_TRUE(r->query.group_by.empty());
  EXPECT_EQ(r->query.limit, 1000u);
  EXPECT_EQ(r->format, ReportFormat::kTable);
}

TEST(UsageReportParse, TimesAreUtcAndRelativeToNow) {
  EXPECT_EQ(parse_report_time("2026-11-01", kNow), 1'793'491'200'000);
  EXPECT_EQ(parse_report_time("2026-11-01T10:00:00Z", kNow), 1'793'491'200'000 + 36'000'000);
  EXPECT_EQ(parse_report_time("2026-11-01T11:30:00+01:00", kNow), 1'793'491'200'000 + 37'800'000);
  EXPECT_EQ(parse_report_time("2024-02-29", kNow), 1'709'164'800'000) << "leap day";
  EXPECT_EQ(parse_report_time("24h", kNow), kNow - 86'400'000);
  EXPECT_EQ(parse_report_time("90m", kNow), kNow - 5'400'000);
  EXPECT_EQ(parse_report_time("0d", kNow), kNow);
  for (const char* bad : {"", "7", "d", "7w", "-1d", "2026-13-01", "2025-02-29", "2026-11-31",
                          "2026-11-01T24:00Z", "2026-11-01T10:00:00", "2026-11-01T10:30Z",
                          "2026-11-01 10:00", "26-11-01", "2026-11-01T10:00:61Z", "1e3d"}) {
    EXPECT_FALSE(parse_report_time(bad, kNow)) << bad;
  }
}

TEST(UsageReportParse, ErrorsNameTheParameterAndWhatItExpects) {
  EXPECT_NE(error_of({{"by", "key,colour"}}).find("by: unknown dimension \"colour\""),
            std::string::npos);
  EXPECT_NE(error_of({{"by", "key,key"}}).find("given twice"), std::string::npos);
  EXPECT_NE(error_of({{"since", "last week"}}).find("since: expected a time like 7d"),
            std::string::npos);
  EXPECT_NE(error_of({{"limit", "0"}}).find("limit: expected a number of rows from 1"),
            std::string::npos);
  EXPECT_NE(error_of({{"limit", "12x"}}).find("limit:"), std::string::npos);
  EXPECT_NE(error_of({{"format", "xml"}}).find("format: expected table, json or csv"),
            std::string::npos);
  EXPECT_NE(error_of({{"colour", "red"}}).find("unknown parameter \"colour\" (expected one of by,"),
            std::string::npos);
  EXPECT_NE(error_of({{"key", "a"}, {"key", "b"}}).find("key: given twice"), std::string::npos);
  EXPECT_NE(error_of({{"since", "2026-11-30"}, {"until", "2026-11-30"}})
                .find("since (2026-11-30T00:00:00Z) must be before until"),
            std::string::npos);
}

TEST(FormatMicros, IsExactDecimalWithSixPlaces) {
  EXPECT_EQ(format_micros(12'345'678), "12.345678");
  EXPECT_EQ(format_micros(0), "0.000000");
  EXPECT_EQ(format_micros(1), "0.000001");
  EXPECT_EQ(format_micros(-5), "-0.000005");
  EXPECT_EQ(format_micros(1'000'000), "1.000000");
  // Beyond a double's 53-bit mantissa: a float conversion would round these.
  EXPECT_EQ(format_micros(9'007'199'254'740'993), "9007199254.740993");
  EXPECT_EQ(format_micros(INT64_MAX), "9223372036854.775807");
  EXPECT_EQ(format_micros(INT64_MIN), "-9223372036854.775808");
}

std::vector<UsageRow> sample_rows() {
  UsageRow a;
  a.group = {"team-a", "gpt-4o"};
  a.requests = 1200;
  a.failed = 3;
  a.input_tokens = 5'000'000;
  a.output_tokens = 250'000;
  a.cache_read_tokens = 1000;
  a.cache_write_tokens = 20;
  a.reasoning_tokens = 7;
  a.cost_micros = 12'345'678;
  a.unaccounted = 0;
  UsageRow b;
  b.group = {"", "mystery-model"};
  b.requests = 4;
  b.unaccounted = 4;
  return {a, b};
}

UsageQuery by_key_model() {
  UsageQuery q;
  q.group_by = {Dimension::kKey, Dimension::kModel};
  return q;
}

TEST(RenderUsage, TableIsAlignedWithCostAndUnaccountedColumns) {
  const std::string table = render_usage(by_key_model(), sample_rows(), ReportFormat::kTable);
  EXPECT_EQ(table,
            "key     model          requests  failed  input_tokens  output_tokens  "
            "cache_read_tokens  cache_write_tokens  reasoning_tokens       cost  unaccounted\n"
            "team-a  gpt-4o             1200       3       5000000         250000  "
            "             1000                  20                 7  12.345678            0\n"
            "(none)  mystery-model         4       0             0              0  "
            "                0                   0                 0   0.000000            4\n");
}

TEST(RenderUsage, TableNeutralisesControlBytesAndSaysWhenTheLimitCut) {
  UsageQuery q;
  q.group_by = {Dimension::kFeature};
  q.limit = 1;
  UsageRow row;
  row.group = {"evil\x1b[31m"};
  row.requests = 1;
  const std::string table = render_usage(q, {row}, ReportFormat::kTable);
  EXPECT_EQ(table.find('\x1b'), std::string::npos);
  EXPECT_NE(table.find("evil?[31m"), std::string::npos);
  EXPECT_NE(table.find("(first 1 rows; raise limit= for more)"), std::string::npos);
}

TEST(RenderUsage, CsvQuotesAndDisarmsFormulas) {
  UsageQuery q;
  q.group_by = {Dimension::kFeature};
  UsageRow formula;
  formula.group = {"=HYPERLINK(\"x\")"};
  formula.requests = 2;
  formula.cost_micros = 1'500'000;
  UsageRow comma;
  comma.group = {"a,b"};
  comma.requests = 1;
  const std::string csv = render_usage(q, {formula, comma}, ReportFormat::kCsv);
  EXPECT_EQ(csv,
            "feature,requests,failed,input_tokens,output_tokens,cache_read_tokens,"
            "cache_write_tokens,reasoning_tokens,cost,unaccounted,saved_input_tokens,"
            "saved_output_tokens,saved_cost\r\n"
            "\"'=HYPERLINK(\"\"x\"\")\",2,0,0,0,0,0,0,1.500000,0,0,0,0.000000\r\n"
            "\"a,b\",1,0,0,0,0,0,0,0.000000,0,0,0,0.000000\r\n");
}

// Answers served without an upstream call show what they saved; a report with none of them
// keeps its columns as they were.
TEST(RenderUsage, TheTableShowsSavingsWhenSomethingWasSaved) {
  UsageQuery q;
  q.group_by = {Dimension::kOutcome};
  UsageRow hits;
  hits.group = {"cache_hit"};
  hits.requests = 3;
  hits.saved_input_tokens = 300;
  hits.saved_output_tokens = 60;
  hits.saved_cost_micros = 4'500;
  UsageRow paid;
  paid.group = {"complete"};
  paid.requests = 1;
  paid.input_tokens = 100;
  paid.output_tokens = 20;
  paid.cost_micros = 1'500;
  const std::string table = render_usage(q, {paid, hits}, ReportFormat::kTable);
  EXPECT_NE(table.find("saved_input_tokens  saved_output_tokens  saved_cost"), std::string::npos)
      << table;
  EXPECT_NE(table.find("300                   60    0.004500"), std::string::npos) << table;
  EXPECT_EQ(render_usage(q, {paid}, ReportFormat::kTable).find("saved"), std::string::npos);
  const std::string json = render_usage(q, {hits}, ReportFormat::kJson);
  EXPECT_NE(
      json.find(
          R"("saved_input_tokens":300,"saved_output_tokens":60,"saved_cost":"0.004500","saved_cost_micros":4500)"),
      std::string::npos)
      << json;
}

TEST(RenderUsage, JsonHasDecimalAndIntegerCostAndTheRange) {
  UsageQuery q = by_key_model();
  q.from_ms = 1'796'040'000'000;
  const std::string json = render_usage(q, sample_rows(), ReportFormat::kJson);
  const boost::json::value v = boost::json::parse(json);
  EXPECT_EQ(v.at("from").as_string(), "2026-11-30T12:00:00Z");
  EXPECT_TRUE(v.at("to").is_null());
  EXPECT_EQ(v.at("group_by").as_array().size(), 2u);
  const auto& row = v.at("rows").as_array().at(0).as_object();
  EXPECT_EQ(row.at("key").as_string(), "team-a");
  EXPECT_EQ(row.at("model").as_string(), "gpt-4o");
  EXPECT_EQ(row.at("cost").as_string(), "12.345678");
  EXPECT_EQ(row.at("cost_micros").as_int64(), 12'345'678);
  EXPECT_EQ(row.at("requests").to_number<std::uint64_t>(), 1200u);
  EXPECT_EQ(v.at("rows").as_array().at(1).at("unaccounted").to_number<std::uint64_t>(), 4u);
}

UsageRecord slow_record() {
  UsageRecord r;
  r.record_id = "gw1-77";
  r.request_id = "req-slow";
  r.started_at_ms = 1'796'040'000'000;
  r.ended_at_ms = 1'796'040'009'500;
  r.key_name = "team-a";
  r.alias = "fast";
  r.provider = "anthropic";
  r.model = "claude-sonnet";
  r.ingress = "openai_chat";
  r.operation = "chat";
  r.stream = true;
  r.usage_reported = true;
  r.input_tokens = 1200;
  r.output_tokens = 300;
  r.status = 200;
  r.outcome = "complete";
  r.finish_reason = "stop";
  r.total_us = 9'500'000;
  r.overhead_us = 412;
  r.queue_us = 250'000;
  r.upstream_ttfb_us = 1'900'000;
  r.ttft_us = 2'000'100;
  r.output_tokens_per_s_milli = 40'000;
  r.priced = true;
  r.price_version = "2026-11-01";
  r.cost_micros = 8100;
  r.cost_items = R"([{"item":"input","micros":3600}])";
  AttemptRecord timeout;
  timeout.provider = "openai";
  timeout.model = "gpt-4o";
  timeout.path = "0";
  timeout.error_class = "upstream_timeout";
  timeout.acquire_us = 150;
  timeout.duration_us = 5'000'000;
  AttemptRecord ok;
  ok.provider = "anthropic";
  ok.model = "claude-sonnet";
  ok.path = "1";
  ok.status = 200;
  ok.backoff_ms = 250;
  ok.acquire_us = 30'000;
  ok.first_byte_us = 1'900'000;
  ok.duration_us = 4'200'000;
  ok.reused_connection = false;
  r.attempts = {timeout, ok};
  return r;
}

TEST(RenderUsageRecord, TextShowsWhereTheTimeWent) {
  const std::string text = render_usage_record(slow_record(), ReportFormat::kTable);
  EXPECT_NE(text.find("request    req-slow  (record gw1-77)"), std::string::npos) << text;
  EXPECT_NE(text.find("total 9500.000 ms  gateway overhead 0.412 ms  queueing 250.000 ms"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("upstream first byte 1900.000 ms  first token 2000.100 ms  output "
                      "40.000 tokens/s"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("#1 openai / gpt-4o (path 0)  status 0  error upstream_timeout"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("first byte -  duration 5000.000 ms"), std::string::npos) << text;
  EXPECT_NE(text.find("backoff before 250 ms"), std::string::npos) << text;
  EXPECT_NE(text.find("cost       0.008100 USD  price version 2026-11-01"), std::string::npos);
}

TEST(RenderUsageRecord, UnpricedRecordsSayUnaccountedNotZero) {
  UsageRecord r = slow_record();
  r.priced = false;
  r.cost_micros = 0;
  const std::string text = render_usage_record(r, ReportFormat::kTable);
  EXPECT_NE(text.find("unaccounted (no price for this model)"), std::string::npos);
  EXPECT_EQ(text.find("0.000000"), std::string::npos);
}

TEST(RenderUsageRecord, JsonCarriesEveryFieldAndTheAttempts) {
  const boost::json::value v =
      boost::json::parse(render_usage_record(slow_record(), ReportFormat::kJson));
  EXPECT_EQ(v.at("request_id").as_string(), "req-slow");
  EXPECT_EQ(v.at("queue_us").as_int64(), 250'000);
  EXPECT_EQ(v.at("attempts").as_array().size(), 2u);
  EXPECT_EQ(v.at("attempts").as_array().at(1).at("backoff_ms").as_int64(), 250);
  EXPECT_EQ(v.at("cost_items").as_array().at(0).at("micros").as_int64(), 3600);
  EXPECT_EQ(v.at("cost").as_string(), "0.008100");
}

}  // namespace
}  // namespace sluice::store
