#include "store/usage_segment.h"

#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "store/usage_fields.h"

namespace sluice::store {
namespace {

UsageRecord sample(int i) {
  UsageRecord r;
  r.record_id = "7f3a9c-0-" + std::to_string(1000 + i);
  r.request_id = "019ad4c2e1f0" + std::string(20, static_cast<char>('a' + i % 6));
  r.started_at_ms = 1'796'131'139'368 + i;
  r.ended_at_ms = r.started_at_ms + 900;
  r.key_name = i % 3 == 0 ? "team-a" : "team-b";
  r.key_group = "research";
  r.feature = i % 2 == 0 ? "" : "search";
  r.ingress = "openai_chat";
  r.operation = "chat";
  r.alias = "fast";
  r.provider = "openai";
  r.model = "gpt-4o-mini";
  r.stream = i % 2 == 1;
  r.usage_reported = true;
  r.input_tokens = 100 + static_cast<std::uint64_t>(i) * 7;
  r.output_tokens = 10 + static_cast<std::uint64_t>(i);
  r.reasoning_tokens = std::uint64_t{1} << 62;  // large values round-trip
  r.status = i % 4 == 0 ? 503 : 200;
  r.outcome = i % 4 == 0 ? "upstream_error" : "complete";
  r.error_class = i % 4 == 0 ? "upstream_status" : "";
  r.finish_reason = "stop";
  for (int a = 0; a < i % 3; ++a) {
    AttemptRecord attempt;
    attempt.provider = a == 0 ? "openai" : "azure";
    attempt.model = "gpt-4o-mini";
    attempt.path = std::to_string(a);
    attempt.status = a == 0 ? 503 : 200;
    attempt.acquire_us = -1;
    attempt.first_byte_us = 800 + a;
    attempt.duration_us = 1200;
    attempt.reused_connection = a == 1;
    r.attempts.push_back(attempt);
  }
  r.total_us = 1200 + i;
  r.overhead_us = -1;
  r.ttft_us = INT64_MIN;
  r.output_tokens_per_s_milli = INT64_MAX;
  r.priced = i % 5 != 0;
  r.price_version = "2026-11-30";
  r.cost_micros = -3 + i;
  r.cost_items = R"({"version":"2026-11-30","items":[{"name":"input","tokens":)" +
                 std::to_string(r.input_tokens) + R"(,"rate":"0.15"}],"micros":)" +
                 std::to_string(r.cost_micros) + "}";
  return r;
}

// Every field as text, for comparing whole records.
std::string describe(const UsageRecord& r) {
  std::string out;
  visit_usage_fields(r, [&](std::string_view name, const auto& v) {
    using T = std::decay_t<decltype(v)>;
    out += std::string(name) + "=";
    if constexpr (std::is_same_v<T, std::string>) {
      out += v;
    } else if constexpr (std::is_same_v<T, std::vector<AttemptRecord>>) {
      out += encode_attempts(v);
    } else {
      out += std::to_string(v);
    }
    out += "\n";
  });
  return out;
}

std::string encode(const std::vector<UsageRecord>& records) {
  std::string body;
  SegmentEncoder encoder;
  encoder.start(body);
  for (const UsageRecord& r : records) {
    encoder.append(body, r);
  }
  return body;
}

std::vector<UsageRecord> samples(int n) {
  std::vector<UsageRecord> out;
  for (int i = 0; i < n; ++i) {
    out.push_back(sample(i));
  }
  return out;
}

TEST(UsageSegment, EveryFieldOfEveryRecordRoundTrips) {
  const auto records = samples(40);
  const std::string body = encode(records);
  auto layout = SegmentLayout::parse(usage_segment_layout());
  ASSERT_TRUE(layout) << layout.error().message();
  SegmentReader reader(*layout, body);
  for (const UsageRecord& expected : records) {
    ASSERT_FALSE(reader.done());
    UsageRecord got;
    ASSERT_TRUE(reader.next(got));
    EXPECT_EQ(describe(got), describe(expected));
  }
  EXPECT_TRUE(reader.done());
}

TEST(UsageSegment, FieldsSharedWithTheRecordBeforeCostAFewBytes) {
  const auto records = samples(200);
  std::size_t whole = 0;
  for (const UsageRecord& r : records) {
    whole += encode({r}).size();
  }
  const std::size_t together = encode(records).size();
  EXPECT_LT(together * 3, whole * 2) << together << " bytes together, " << whole << " one by one";
}

TEST(UsageSegment, TheRequestIdIsWrittenWholeSoItCanBeSearchedFor) {
  const auto records = samples(10);
  const std::string body = encode(records);
  for (const UsageRecord& r : records) {
    EXPECT_NE(body.find(segment_request_id_bytes(r.request_id)), std::string::npos) << r.request_id;
  }
  EXPECT_EQ(body.find(segment_request_id_bytes("019ad4c2e1f0zzzz")), std::string::npos);
}

TEST(UsageSegment, ABodyCutAnywhereInsideARecordIsRefused) {
  const auto records = samples(3);
  const std::string body = encode(records);
  const std::size_t first = encode({records[0]}).size();
  auto layout = SegmentLayout::parse(usage_segment_layout());
  ASSERT_TRUE(layout);
  for (std::size_t cut = 1; cut < first; ++cut) {
    SegmentReader reader(*layout, std::string_view(body).substr(0, cut));
    UsageRecord got;
    EXPECT_FALSE(reader.next(got)) << "cut at " << cut;
  }
}

// Bytes as another build would write them under its own field list.
void put_varint(std::string& out, std::uint64_t v) {
  while (v >= 0x80) {
    out += static_cast<char>(v | 0x80);
    v >>= 7;
  }
  out += static_cast<char>(v);
}
void put_string(std::string& out, std::string_view s) {
  put_varint(out, 0);
  put_varint(out, 0);
  put_varint(out, s.size());
  out += s;
}

TEST(UsageSegment, ASegmentOfAnotherBuildIsReadByFieldName) {
  // Fields reordered, two this build does not know (skipped), most missing (defaults), an
  // attempt with a field it does not know and without the rest.
  auto layout = SegmentLayout::parse(
      "model:s,future_text:s,record_id:s,input_tokens:u,future_number:l,stream:b,"
      "attempts:a(status:i,colour:s,provider:s),cost_micros:l");
  ASSERT_TRUE(layout) << layout.error().message();
  std::string body;
  put_string(body, "gpt-5");
  put_string(body, "ignored");
  put_string(body, "r-1");
  put_varint(body, 1234);
  put_varint(body, 7);  // zigzag -4
  body += '\1';
  put_varint(body, 1);  // one attempt
  put_varint(body, 2 * 429);
  put_string(body, "blue");
  put_string(body, "anthropic");
  put_varint(body, 2 * 5000);
  SegmentReader reader(*layout, body);
  UsageRecord got;
  ASSERT_TRUE(reader.next(got));
  EXPECT_TRUE(reader.done());
  EXPECT_EQ(got.model, "gpt-5");
  EXPECT_EQ(got.record_id, "r-1");
  EXPECT_EQ(got.input_tokens, 1234u);
  EXPECT_TRUE(got.stream);
  ASSERT_EQ(got.attempts.size(), 1u);
  EXPECT_EQ(got.attempts[0].status, 429);
  EXPECT_EQ(got.attempts[0].provider, "anthropic");
  EXPECT_EQ(got.attempts[0].duration_us, -1) << "missing: the default";
  EXPECT_EQ(got.cost_micros, 5000);
  EXPECT_EQ(got.currency, "USD") << "missing: the default";
  EXPECT_EQ(got.total_us, -1);
}

TEST(UsageSegment, ALayoutThisBuildCannotReadIsRefused) {
  EXPECT_FALSE(SegmentLayout::parse(""));
  EXPECT_FALSE(SegmentLayout::parse("record_id"));
  EXPECT_FALSE(SegmentLayout::parse("record_id:s,"));
  EXPECT_FALSE(SegmentLayout::parse("record_id:z"));  // a type from a newer build
  EXPECT_FALSE(SegmentLayout::parse("attempts:a(status:i"));
  EXPECT_FALSE(SegmentLayout::parse("attempts:a"));
  EXPECT_TRUE(SegmentLayout::parse("record_id:s,attempts:a()"));
}

TEST(RecordSequence, TheIdIsAlwaysThePrefixThenTheSequence) {
  struct Case {
    std::string_view id;
    std::string_view prefix;
    std::int64_t sequence;
  };
  for (const Case& c :
       {Case{"7f3a-0-15", "7f3a-0-", 15}, Case{"a-007", "a-00", 7}, Case{"a-0", "a-", 0},
        Case{"a-00", "a-0", 0}, Case{"abc", "abc", -1}, Case{"", "", -1}, Case{"42", "", 42},
        Case{"x-1234567890123456789", "x-1", 234567890123456789}}) {
    const RecordSequence s = split_record_id(c.id);
    EXPECT_EQ(s.prefix, c.prefix) << c.id;
    EXPECT_EQ(s.sequence, c.sequence) << c.id;
    EXPECT_EQ(std::string(s.prefix) + (s.sequence >= 0 ? std::to_string(s.sequence) : ""), c.id);
  }
}

}  // namespace
}  // namespace sluice::store
