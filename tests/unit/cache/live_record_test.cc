#include "cache/live_record.h"

#include <vector>

#include <gtest/gtest.h>

// A shared call's live records (what a waiter on another instance reads): every event kind
// comes back as it went, the end says how the call ended, and bytes that are not a record of
// this version are refused, never misread.
namespace sluice::cache {
namespace {

std::vector<ir::StreamEvent> sample_events() {
  std::vector<ir::StreamEvent> events(7);
  events[0].kind = ir::StreamEventKind::kStart;
  events[0].id = "msg_1";
  events[0].model = "claude-x";
  events[1].kind = ir::StreamEventKind::kReasoningDelta;
  events[1].text = "Let me think.";
  events[2].kind = ir::StreamEventKind::kReasoningSignature;
  events[2].text = "sig-abc";
  events[3].kind = ir::StreamEventKind::kToolCallStart;
  events[3].index = 2;
  events[3].id = "call_1";
  events[3].name = "weather";
  events[4].kind = ir::StreamEventKind::kUsage;
  events[4].usage = ir::Usage{120, 40, 100, 3, 12};
  events[5].kind = ir::StreamEventKind::kFinish;
  events[5].finish = ir::FinishReason::kStopSequence;
  events[5].text = "END";
  events[6].kind = ir::StreamEventKind::kError;
  events[6].error = Error(ErrorKind::kUpstreamProtocol, 502, "the stream broke")
                        .with_code("upstream_stream_truncated");
  return events;
}

TEST(LiveRecord, EventsComeBackAsTheyWent) {
  const std::vector<ir::StreamEvent> events = sample_events();
  const std::string bytes = encode_live_events(events, "anthropic", "claude-x", ir::Usage{5, 6});
  std::optional<LiveRecord> record = decode_live(bytes, 1 << 20);
  ASSERT_TRUE(record.has_value());
  EXPECT_EQ(record->kind, LiveRecord::Kind::kEvents);
  EXPECT_EQ(record->provider, "anthropic");
  EXPECT_EQ(record->model, "claude-x");
  EXPECT_EQ(record->usage, (ir::Usage{5, 6}));
  ASSERT_EQ(record->events.size(), events.size());
  for (std::size_t i = 0; i < events.size(); ++i) {
    const ir::StreamEvent& a = events[i];
    const ir::StreamEvent& b = record->events[i];
    EXPECT_EQ(a.kind, b.kind) << i;
    EXPECT_EQ(a.index, b.index) << i;
    EXPECT_EQ(a.text, b.text) << i;
    EXPECT_EQ(a.id, b.id) << i;
    EXPECT_EQ(a.name, b.name) << i;
    EXPECT_EQ(a.model, b.model) << i;
    EXPECT_EQ(a.finish, b.finish) << i;
    EXPECT_EQ(a.usage, b.usage) << i;
  }
  const Error& error = record->events[6].error;
  EXPECT_EQ(error.kind(), ErrorKind::kUpstreamProtocol);
  EXPECT_EQ(error.http_status(), 502);
  EXPECT_EQ(error.message(), "the stream broke");
  EXPECT_EQ(error.code(), "upstream_stream_truncated");
}

TEST(LiveRecord, TheEndSaysWhetherTheAnswerWasWhole) {
  for (const bool whole : {true, false}) {
    std::optional<LiveRecord> record =
        decode_live(encode_live_end(whole, "oa", "gpt-x", std::nullopt), 1 << 20);
    ASSERT_TRUE(record.has_value());
    EXPECT_EQ(record->kind, LiveRecord::Kind::kEnd);
    EXPECT_EQ(record->whole, whole);
    EXPECT_EQ(record->provider, "oa");
    EXPECT_FALSE(record->usage.has_value());
  }
}

TEST(LiveRecord, AnythingElseIsRefused) {
  const std::string bytes = encode_live_events(sample_events(), "oa", "gpt-x", std::nullopt);
  for (std::size_t cut = 0; cut < bytes.size(); ++cut) {
    EXPECT_FALSE(decode_live(bytes.substr(0, cut), 1 << 20).has_value()) << "cut at " << cut;
  }
  EXPECT_FALSE(decode_live(bytes + "x", 1 << 20).has_value()) << "bytes after the record";
  EXPECT_FALSE(decode_live(bytes, bytes.size() - 1).has_value()) << "over the size bound";
  std::string other = bytes;
  other[3] = '2';
  EXPECT_FALSE(decode_live(other, 1 << 20).has_value()) << "another version";
  std::string bad_kind = bytes;
  bad_kind[4] = 9;
  EXPECT_FALSE(decode_live(bad_kind, 1 << 20).has_value());
}

}  // namespace
}  // namespace sluice::cache
