#include "observability/otlp_json.h"

#include <string>
#include <vector>

#include <boost/json/parse.hpp>
#include <gtest/gtest.h>

#include "observability/span_buffer.h"

namespace sluice::observability {
namespace {

TraceId trace_id() { return TraceId{0x4bf92f3577b34da6ULL, 0xa3ce929d0e0e4736ULL}; }

TEST(SpanWriter, GoldenClientSpan) {
  std::string out;
  SpanWriter span(out, trace_id(), 0x00f067aa0ba902b7ULL, 0x1122334455667788ULL, "chat gpt-4o",
                  SpanKind::kClient, {1700000000000000000, 1700000000250000000});
  const std::string_view reasons[] = {"stop"};
  span.str("gen_ai.operation.name", "chat")
      .integer("gen_ai.usage.input_tokens", 12)
      .boolean("sluice.passthrough", true)
      .real("sluice.first_byte_ms", 1.5)
      .strings("gen_ai.response.finish_reasons", reasons)
      .str("quoted", "a\"b\n");
  span.finish(SpanStatus::kError, "upstream returned 500");
  EXPECT_EQ(
      out,
      R"({"traceId":"4bf92f3577b34da6a3ce929d0e0e4736","spanId":"00f067aa0ba902b7",)"
      R"("parentSpanId":"1122334455667788","name":"chat gpt-4o","kind":3,)"
      R"("startTimeUnixNano":"1700000000000000000","endTimeUnixNano":"1700000000250000000",)"
      R"("attributes":[{"key":"gen_ai.operation.name","value":{"stringValue":"chat"}},)"
      R"({"key":"gen_ai.usage.input_tokens","value":{"intValue":"12"}},)"
      R"({"key":"sluice.passthrough","value":{"boolValue":true}},)"
      R"({"key":"sluice.first_byte_ms","value":{"doubleValue":1.5}},)"
      R"({"key":"gen_ai.response.finish_reasons","value":{"arrayValue":{"values":[{"stringValue":"stop"}]}}},)"
      R"({"key":"quoted","value":{"stringValue":"a\"b\n"}}],)"
      R"("status":{"code":2,"message":"upstream returned 500"}})");
}

TEST(SpanWriter, RootSpanHasNoParentAndUnsetStatusIsEmpty) {
  std::string out;
  SpanWriter(out, trace_id(), 1, 0, "GET", SpanKind::kServer, {1, 2}).finish(SpanStatus::kUnset);
  EXPECT_EQ(out, R"({"traceId":"4bf92f3577b34da6a3ce929d0e0e4736","spanId":"0000000000000001",)"
                 R"("name":"GET","kind":2,"startTimeUnixNano":"1","endTimeUnixNano":"2",)"
                 R"("attributes":[],"status":{}})");
}

TEST(ExportRequest, GoldenEnvelope) {
  std::vector<std::string> spans(2);
  SpanWriter(spans[0], trace_id(), 1, 0, "a", SpanKind::kServer, {1, 2}).finish(SpanStatus::kOk);
  SpanWriter(spans[1], trace_id(), 2, 1, "b", SpanKind::kClient, {1, 2}).finish(SpanStatus::kUnset);
  const std::string body = export_request({"sluice-test", "1.2.3", "abc"}, spans);
  const std::string_view prefix =
      R"({"resourceSpans":[{"resource":{"attributes":[)"
      R"({"key":"service.name","value":{"stringValue":"sluice-test"}},)"
      R"({"key":"service.version","value":{"stringValue":"1.2.3"}},)"
      R"({"key":"service.instance.id","value":{"stringValue":"abc"}}]},)"
      R"("scopeSpans":[{"scope":{"name":"sluice","version":"1.2.3"},"spans":[)";
  EXPECT_EQ(body.substr(0, prefix.size()), prefix);
  EXPECT_TRUE(body.ends_with("]}]}]}"));
  const auto doc = boost::json::parse(body);
  const auto& list = doc.at("resourceSpans").at(0).at("scopeSpans").at(0).at("spans").as_array();
  ASSERT_EQ(list.size(), 2u);
  EXPECT_EQ(list[1].at("parentSpanId").as_string(), "0000000000000001");
  EXPECT_EQ(list[0].at("status").at("code").as_int64(), 1);
}

TEST(SpanBuffer, DropsAndCountsWhenAWorkersQueueIsFull) {
  SpanBuffer buffer(2, 4);  // two per worker
  buffer.push(0, "a");
  buffer.push(0, "b");
  buffer.push(0, "c");  // dropped
  buffer.push(1, "d");
  EXPECT_EQ(buffer.pending(), 3u);
  EXPECT_EQ(buffer.dropped(), 1u);
  std::vector<std::string> out;
  EXPECT_EQ(buffer.take(out, 2), 2u);
  EXPECT_EQ(buffer.take(out, 10), 1u);
  EXPECT_EQ(buffer.take(out, 10), 0u);
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(buffer.pending(), 0u);
  buffer.push(0, "e");  // room again
  EXPECT_EQ(buffer.pending(), 1u);
  EXPECT_EQ(buffer.dropped(), 1u);
}

}  // namespace
}  // namespace sluice::observability
