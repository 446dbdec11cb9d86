#include "observability/trace_context.h"

#include <set>
#include <string>

#include <gtest/gtest.h>

namespace sluice::observability {
namespace {

constexpr std::string_view kValid = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

TEST(Traceparent, ParsesTheSpecExample) {
  auto tp = parse_traceparent(kValid);
  ASSERT_TRUE(tp);
  EXPECT_EQ(to_hex(tp->trace), "4bf92f3577b34da6a3ce929d0e0e4736");
  EXPECT_EQ(to_hex(tp->parent), "00f067aa0ba902b7");
  EXPECT_TRUE(tp->sampled);
}

struct Case {
  std::string_view value;
  bool valid;
  bool sampled = false;
};

TEST(Traceparent, TableOfValidAndInvalidValues) {
  const Case cases[] = {
      {kValid, true, true},
      {"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00", true, false},
      // Other flag bits (Level 2's random flag) do not change sampling.
      {"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-03", true, true},
      {"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-02", true, false},
      // A future version: read as 00, extra fields after a '-' allowed.
      {"cc-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", true, true},
      {"cc-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-what-the-future", true, true},
      {"cc-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01x", false},
      // Version 00 must be exactly 55 characters.
      {"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra", false},
      {"ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", false},
      {"00-00000000000000000000000000000000-00f067aa0ba902b7-01", false},
      {"00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01", false},
      {"00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01", false},
      {"00-4bf92f3577b34da6a3ce929d0e0e4736-00F067AA0BA902B7-01", false},
      {"00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01", false},
      {"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b-01", false},
      {"00_4bf92f3577b34da6a3ce929d0e0e4736_00f067aa0ba902b7_01", false},
      {"0-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", false},
      {"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-0g", false},
      {"00-4bf92f3577b34da6a3ce929d0e0e47zz-00f067aa0ba902b7-01", false},
      {"", false},
      {"garbage", false},
      {" 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", false},
  };
  for (const Case& c : cases) {
    auto tp = parse_traceparent(c.value);
    EXPECT_EQ(tp.has_value(), c.valid) << c.value;
    if (tp && c.valid) {
      EXPECT_EQ(tp->sampled, c.sampled) << c.value;
    }
  }
}

TEST(Traceparent, FormatRoundTrips) {
  auto tp = parse_traceparent(kValid);
  ASSERT_TRUE(tp);
  std::array<char, kTraceparentSize> out;
  format_traceparent(tp->trace, tp->parent, true, out);
  EXPECT_EQ(std::string_view(out.data(), out.size()), kValid);
  format_traceparent(tp->trace, 0x1234, false, out);
  EXPECT_EQ(std::string_view(out.data(), out.size()),
            "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000001234-00");
}

TEST(Ids, AreNonZeroAndDistinct) {
  std::set<std::string> seen;
  for (int i = 0; i < 10000; ++i) {
    const TraceId t = new_trace_id();
    const SpanId s = new_span_id();
    ASSERT_TRUE(t.valid());
    ASSERT_NE(s, 0u);
    seen.insert(to_hex(t));
  }
  EXPECT_EQ(seen.size(), 10000u);
}

TEST(Sampling, RatioBoundsAndProportion) {
  int sampled = 0;
  for (int i = 0; i < 20000; ++i) {
    const TraceId id = new_trace_id();
    EXPECT_TRUE(sample_by_ratio(id, 1.0));
    EXPECT_FALSE(sample_by_ratio(id, 0.0));
    sampled += sample_by_ratio(id, 0.25) ? 1 : 0;
  }
  // 0.25 of 20000 = 5000, standard deviation about 61: 10 sigma of room.
  EXPECT_GT(sampled, 4400);
  EXPECT_LT(sampled, 5600);
}

TEST(Sampling, SameTraceSameDecision) {
  const TraceId id = new_trace_id();
  const bool first = sample_by_ratio(id, 0.5);
  for (int i = 0; i < 10; ++i) {
    EXPECT_EQ(sample_by_ratio(id, 0.5), first);
  }
}

TEST(BeginTrace, ParentBasedHonoursTheCallersFlag) {
  // Sampled caller at ratio 0: still recorded.
  TraceContext on = begin_trace(1, kValid, "", true, 0.0);
  EXPECT_TRUE(on.recording);
  EXPECT_TRUE(on.sampled);
  EXPECT_EQ(to_hex(on.trace), "4bf92f3577b34da6a3ce929d0e0e4736");
  EXPECT_EQ(to_hex(on.parent), "00f067aa0ba902b7");
  EXPECT_NE(on.span, 0u);
  EXPECT_NE(on.span, on.parent);
  // Unsampled caller at ratio 1: not recorded, still propagated unsampled.
  TraceContext off =
      begin_trace(1, "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00", "", true, 1.0);
  EXPECT_TRUE(off.active());
  EXPECT_FALSE(off.recording);
  EXPECT_FALSE(off.sampled);
}

TEST(BeginTrace, NoCallerContextStartsATraceAtTheRatio) {
  TraceContext all = begin_trace(0, "", "", true, 1.0);
  EXPECT_TRUE(all.active());
  EXPECT_TRUE(all.recording);
  EXPECT_EQ(all.parent, 0u);
  TraceContext none = begin_trace(0, "", "", true, 0.0);
  EXPECT_TRUE(none.active());  // still propagated, unsampled
  EXPECT_FALSE(none.recording);
  EXPECT_FALSE(none.sampled);
}

TEST(BeginTrace, MalformedOrRepeatedTraceparentStartsANewTrace) {
  TraceContext bad = begin_trace(1, "00-zzz", "vendor=1", true, 1.0);
  EXPECT_TRUE(bad.active());
  EXPECT_EQ(bad.parent, 0u);
  EXPECT_TRUE(bad.tracestate.empty());  // tracestate without a valid traceparent is dropped
  TraceContext twice = begin_trace(2, kValid, "", true, 1.0);
  EXPECT_NE(to_hex(twice.trace), "4bf92f3577b34da6a3ce929d0e0e4736");
}

TEST(BeginTrace, TracingOffCarriesOnlyACallersContext) {
  TraceContext none = begin_trace(0, "", "", false, 1.0);
  EXPECT_FALSE(none.active());
  TraceContext carried = begin_trace(1, kValid, "congo=t61rcWkgMzE", false, 1.0);
  EXPECT_TRUE(carried.active());
  EXPECT_FALSE(carried.recording);
  EXPECT_EQ(carried.span, 0u);
  EXPECT_TRUE(carried.sampled);
  EXPECT_EQ(carried.tracestate, "congo=t61rcWkgMzE");
}

TEST(Tracestate, Sanitised) {
  EXPECT_EQ(sanitize_tracestate("rojo=00f067aa0ba902b7,congo=t61rcWkgMzE"),
            "rojo=00f067aa0ba902b7,congo=t61rcWkgMzE");
  EXPECT_EQ(sanitize_tracestate(" rojo=1 ,, congo=2 "), "rojo=1,congo=2");
  EXPECT_EQ(sanitize_tracestate("rojo=1,\x01=2"), "");
  EXPECT_EQ(sanitize_tracestate("noequals"), "");
  std::string lng;
  for (int i = 0; i < 100; ++i) {
    lng += (i ? ",k" : "k") + std::to_string(i) + "=value";
  }
  const std::string cut = sanitize_tracestate(lng);
  EXPECT_LE(cut.size(), kMaxTracestate);
  EXPECT_TRUE(cut.starts_with("k0=value,k1=value"));
  EXPECT_NE(cut.back(), ',');
}

}  // namespace
}  // namespace sluice::observability
