#include "protocol/bedrock_converse/response.h"

#include <string>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <gtest/gtest.h>

#include "../../support/fixtures.h"

namespace sluice::protocol::bedrock_converse {
namespace {
using ir::PartKind;

std::string fixture(std::string_view name) { return test::read_fixture("bedrock", name); }

TEST(ConverseResponse, DecodesText) {
  auto r = decode_response(fixture("converse-text.json"));
  ASSERT_TRUE(r) << r.error().message();
  ASSERT_EQ(r->content.size(), 1u);
  EXPECT_EQ(r->content[0].kind, PartKind::kText);
  EXPECT_TRUE(r->content[0].text.starts_with("Hello! How can I assist you today?"));
  EXPECT_EQ(r->finish, ir::FinishReason::kStop);
  ASSERT_TRUE(r->usage);
  EXPECT_EQ(*r->usage, (ir::Usage{.input_tokens = 7, .output_tokens = 30}));
  EXPECT_EQ(r->id, "") << "Converse answers carry no id";
  EXPECT_EQ(r->unknown_fields, 0u);
}

TEST(ConverseResponse, DecodesToolUseWithItsInputAsJsonText) {
  auto r = decode_response(fixture("converse-tool-use.json"));
  ASSERT_TRUE(r) << r.error().message();
  ASSERT_EQ(r->content.size(), 1u);
  const ir::ContentPart& call = r->content[0];
  EXPECT_EQ(call.kind, PartKind::kToolCall);
  EXPECT_EQ(call.id, "tooluse_rTk04lpyTTTvtXcoOyVT6p");
  EXPECT_EQ(call.name, "weather");
  EXPECT_EQ(call.arguments, R"({"location":"Seattle"})");
  EXPECT_EQ(r->finish, ir::FinishReason::kToolCalls);
  EXPECT_EQ(r->stop_sequence, "") << "additionalModelResponseFields.stop_sequence is null";
  EXPECT_EQ(*r->usage, (ir::Usage{.input_tokens = 407, .output_tokens = 33}));
  EXPECT_EQ(r->unknown_fields, 0u) << "the recorded *InputTokenCount and type fields are known";
}

TEST(ConverseResponse, DecodesReasoningWithItsSignature) {
  auto r = decode_response(fixture("converse-reasoning.json"));
  ASSERT_TRUE(r) << r.error().message();
  ASSERT_EQ(r->content.size(), 2u);
  EXPECT_EQ(r->content[0].kind, PartKind::kReasoning);
  EXPECT_TRUE(r->content[0].text.starts_with("This is a straightforward question"));
  EXPECT_TRUE(r->content[0].signature.starts_with("Eu4CCkgIBxABGAIqQCc4"));
  EXPECT_EQ(r->content[1].kind, PartKind::kText);
  EXPECT_EQ(*r->usage, (ir::Usage{.input_tokens = 42, .output_tokens = 313}));
}

TEST(ConverseResponse, CacheReadsAndWritesJoinTheInput) {
  // inputTokens excludes the cache (2 + 1322 + 5 = totalTokens 1329); the IR's input includes it.
  auto read = decode_response(fixture("converse-cache-read.json"));
  ASSERT_TRUE(read) << read.error().message();
  EXPECT_EQ(*read->usage,
            (ir::Usage{.input_tokens = 1324, .output_tokens = 5, .cache_read_tokens = 1322}));
  auto write = decode_response(fixture("converse-cache-write.json"));
  ASSERT_TRUE(write) << write.error().message();
  EXPECT_EQ(*write->usage,
            (ir::Usage{.input_tokens = 1324, .output_tokens = 5, .cache_write_tokens = 1322}));
}

TEST(ConverseResponse, StopSequenceFromEitherRecordedShape) {
  for (std::string_view fields :
       {R"({"stop_sequence":"END"})", R"({"delta":{"stop_sequence":"END"}})"}) {
    const std::string body =
        R"({"output":{"message":{"role":"assistant","content":[{"text":"1 2 3"}]}},)"
        R"("stopReason":"stop_sequence","additionalModelResponseFields":)" +
        std::string(fields) +
        R"(,"usage":{"inputTokens":1,"outputTokens":2,"totalTokens":3},"metrics":{"latencyMs":1}})";
    auto r = decode_response(body);
    ASSERT_TRUE(r) << r.error().message();
    EXPECT_EQ(r->finish, ir::FinishReason::kStopSequence);
    EXPECT_EQ(r->stop_sequence, "END");
  }
}

TEST(ConverseResponse, StopReasonsMapToTheIr) {
  struct Case {
    const char* reason;
    ir::FinishReason finish;
  };
  const Case cases[] = {
      {"end_turn", ir::FinishReason::kStop},
      {"tool_use", ir::FinishReason::kToolCalls},
      {"max_tokens", ir::FinishReason::kLength},
      {"model_context_window_exceeded", ir::FinishReason::kLength},
      {"stop_sequence", ir::FinishReason::kStopSequence},
      {"guardrail_intervened", ir::FinishReason::kContentFilter},
      {"content_filtered", ir::FinishReason::kContentFilter},
      {"malformed_tool_use", ir::FinishReason::kOther},
      {"something_new", ir::FinishReason::kOther},
  };
  for (const Case& c : cases) {
    const std::string body =
        R"({"output":{"message":{"role":"assistant","content":[]}},"stopReason":")" +
        std::string(c.reason) + R"("})";
    auto r = decode_response(body);
    ASSERT_TRUE(r) << r.error().message();
    EXPECT_EQ(r->finish, c.finish) << c.reason;
  }
}

TEST(ConverseResponse, RedactedReasoningKeepsItsData) {
  auto r = decode_response(
      R"({"output":{"message":{"role":"assistant","content":[)"
      R"({"reasoningContent":{"redactedContent":"AAEC"}},{"text":"hi"}]}},"stopReason":"end_turn"})");
  ASSERT_TRUE(r) << r.error().message();
  ASSERT_EQ(r->content.size(), 2u);
  EXPECT_EQ(r->content[0].kind, PartKind::kRedactedReasoning);
  EXPECT_EQ(r->content[0].signature, "AAEC");
}

TEST(ConverseResponse, ErrorBodiesAreTheUpstreamsErrors) {
  auto r = decode_response(fixture("error-400-invalid-model.json"));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().kind(), ErrorKind::kUpstreamStatus);
  EXPECT_EQ(r.error().message(), "The provided model identifier is invalid.");
}

TEST(ConverseResponse, WhatIsNoAnswerOrCannotBeTranslatedFails) {
  for (
      std::string_view body : {
          std::string_view("{"),
          std::string_view("[]"),
          std::string_view(R"({"output":{}})"),
          std::string_view(
              R"({"output":{"message":{"role":"assistant","content":[{"citationsContent":{}}]}}})"),
          std::string_view(R"({"output":{"message":{"role":"assistant","content":[)"
                           R"({"toolUse":{"toolUseId":"t","name":"n","input":"{}"}}]}}})"),
          std::string_view(R"({"output":{"message":{"role":"assistant","content":[]}},)"
                           R"("usage":{"inputTokens":"many"}})"),
      }) {
    auto r = decode_response(body);
    ASSERT_FALSE(r) << body;
    EXPECT_EQ(r.error().kind(), ErrorKind::kUpstreamProtocol) << body;
  }
}

TEST(ConverseResponse, UnknownFieldsAreCountedAsDrift) {
  auto r = decode_response(
      R"({"output":{"message":{"role":"assistant","content":[{"text":"x"}],"extra":1}},)"
      R"("stopReason":"end_turn","novel":true,"usage":{"inputTokens":1,"outputTokens":1,)"
      R"("totalTokens":2,"futureTokens":3}})");
  ASSERT_TRUE(r) << r.error().message();
  EXPECT_EQ(r->unknown_fields, 3u);
}

}  // namespace
}  // namespace sluice::protocol::bedrock_converse
