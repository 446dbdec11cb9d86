#include "protocol/anthropic/response.h"

#include <string>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <gtest/gtest.h>

#include "gemini_test_support.h"
#include "protocol/gemini/conventions.h"
#include "protocol/gemini/errors.h"
#include "protocol/gemini/response.h"

namespace sluice::protocol::gemini {
namespace {
namespace json = boost::json;
using test::fixture;

const char* const kResponses[] = {"generate-content-text.json",
                                  "generate-content-cached-content.json",
                                  "generate-content-parallel-function-calls.json"};

class ResponseFixture : public ::testing::TestWithParam<const char*> {};

TEST_P(ResponseFixture, DecodeEncodeDecodeIsTheSame) {
  auto first = decode_response(fixture(GetParam()));
  ASSERT_TRUE(first.has_value()) << first.error().message();
  bool clamped = true;
  auto encoded = encode_response(*first, &clamped);
  ASSERT_TRUE(encoded.has_value()) << encoded.error().message();
  EXPECT_FALSE(clamped);
  EXPECT_NO_THROW((void)json::parse(*encoded));
  auto second = decode_response(*encoded);
  ASSERT_TRUE(second.has_value()) << second.error().message();
  EXPECT_EQ(second->id, first->id);
  EXPECT_EQ(second->model, first->model);
  EXPECT_EQ(second->finish, first->finish);
  EXPECT_EQ(second->usage, first->usage);
  ASSERT_EQ(second->content.size(), first->content.size());
  for (std::size_t i = 0; i < first->content.size(); ++i) {
    const ir::ContentPart& a = first->content[i];
    const ir::ContentPart& b = second->content[i];
    EXPECT_EQ(b.kind, a.kind) << i;
    EXPECT_EQ(b.text, a.text) << i;
    EXPECT_EQ(b.id, a.id) << i;
    EXPECT_EQ(b.name, a.name) << i;
    EXPECT_EQ(b.arguments, a.arguments) << i;
    EXPECT_EQ(b.signature, a.signature) << i;
  }
}

// Gemini upstream -> Anthropic caller: a valid message with the same content.
TEST_P(ResponseFixture, TranslatesToAnAnthropicMessage) {
  auto decoded = decode_response(fixture(GetParam()));
  ASSERT_TRUE(decoded.has_value());
  auto message = anthropic::encode_response(*decoded);
  ASSERT_TRUE(message.has_value()) << message.error().message();
  auto back = anthropic::decode_response(*message);
  ASSERT_TRUE(back.has_value()) << back.error().message();
  ir::Usage usage = *decoded->usage;
  usage.reasoning_tokens = 0;  // Anthropic has no reasoning count
  EXPECT_EQ(back->usage, usage);
  EXPECT_EQ(back->finish, decoded->finish);
  ASSERT_EQ(back->content.size(), decoded->content.size());
  for (std::size_t i = 0; i < back->content.size(); ++i) {
    EXPECT_EQ(back->content[i].kind, decoded->content[i].kind);
    EXPECT_EQ(back->content[i].text, decoded->content[i].text);
    EXPECT_EQ(back->content[i].arguments, decoded->content[i].arguments);
    EXPECT_EQ(back->content[i].signature, decoded->content[i].signature);
  }
}

INSTANTIATE_TEST_SUITE_P(Gemini, ResponseFixture, ::testing::ValuesIn(kResponses));

TEST(DecodeResponse, TextAndUsage) {
  auto r = decode_response(fixture("generate-content-text.json"));
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->id, "bzlXaa_EE_aHqtsPi_zw8Ao");
  EXPECT_EQ(r->model, "gemini-2.5-flash");
  ASSERT_EQ(r->content.size(), 1u);
  EXPECT_EQ(r->content[0].text, "Hello! How can I help you today?");
  EXPECT_EQ(r->finish, ir::FinishReason::kStop);
  // promptTokenCount 9, candidatesTokenCount 9, thoughtsTokenCount 34 (outside candidates).
  EXPECT_EQ(r->usage, (ir::Usage{9, 9 + 34, 0, 0, 34}));
}

TEST(DecodeResponse, CachedContentIsInsideThePrompt) {
  auto r = decode_response(fixture("generate-content-cached-content.json"));
  ASSERT_TRUE(r.has_value());
  // promptTokenCount 3520 includes cachedContentTokenCount 3512; totalTokenCount 3564 =
  // 3520 + 2 + 42.
  EXPECT_EQ(r->usage, (ir::Usage{3520, 2 + 42, 3512, 0, 42}));
  auto encoded = encode_response(*r);
  ASSERT_TRUE(encoded.has_value());
  const json::value usage = json::parse(*encoded).at("usageMetadata");
  EXPECT_EQ(json::serialize(usage),
            R"({"promptTokenCount":3520,"candidatesTokenCount":2,"totalTokenCount":3564,)"
            R"("cachedContentTokenCount":3512,"thoughtsTokenCount":42})");
}

TEST(DecodeResponse, ParallelCallsGetPositionalIdsAndTheSignatureBeforeTheFirst) {
  auto r = decode_response(fixture("generate-content-parallel-function-calls.json"));
  ASSERT_TRUE(r.has_value());
  ASSERT_EQ(r->content.size(), 4u);
  EXPECT_EQ(r->content[0].kind, ir::PartKind::kReasoning);
  EXPECT_EQ(r->content[0].text, "");
  EXPECT_EQ(r->content[0].signature.rfind("Es8FCswFAXLI2nxFGW9oAYt0", 0), 0u);
  for (std::size_t k = 0; k < 3; ++k) {
    const ir::ContentPart& call = r->content[k + 1];
    EXPECT_EQ(call.kind, ir::PartKind::kToolCall);
    EXPECT_EQ(call.name, "generate_topic");
    EXPECT_EQ(call.arguments, "{}");
    EXPECT_EQ(call.id, "call_wOd8abGuO5rgz7IP5tLEGA_" + std::to_string(k));
  }
  EXPECT_EQ(r->finish, ir::FinishReason::kToolCalls);
  // Encoding puts the signature back on the first call, where Gemini had it.
  auto encoded = encode_response(*r);
  ASSERT_TRUE(encoded.has_value());
  const json::array parts =
      json::parse(*encoded).at("candidates").as_array()[0].at("content").at("parts").as_array();
  ASSERT_EQ(parts.size(), 3u);
  EXPECT_TRUE(parts[0].as_object().contains("thoughtSignature"));
  EXPECT_FALSE(parts[1].as_object().contains("thoughtSignature"));
  EXPECT_EQ(parts[1].at("functionCall").at("id"), "call_wOd8abGuO5rgz7IP5tLEGA_1");
}

TEST(DecodeResponse, ErrorsBlocksAndUntranslatableParts) {
  auto error = decode_response(fixture("error-400-invalid-argument.json"));
  ASSERT_FALSE(error.has_value());
  EXPECT_EQ(error.error().http_status(), 400);
  EXPECT_EQ(error.error().code(), "INVALID_ARGUMENT");
  EXPECT_EQ(error.error().message(), "Penalty is not enabled for models/gemini-2.5-flash");

  auto blocked = decode_response(
      R"({"promptFeedback":{"blockReason":"SAFETY"},"usageMetadata":{"promptTokenCount":4}})");
  ASSERT_TRUE(blocked.has_value());
  EXPECT_EQ(blocked->finish, ir::FinishReason::kContentFilter);
  EXPECT_TRUE(blocked->content.empty());

  auto no_reason = decode_response(R"({"candidates":[{"content":{"parts":[{"text":"x"}]}}]})");
  ASSERT_TRUE(no_reason.has_value());
  EXPECT_EQ(no_reason->finish, ir::FinishReason::kOther) << "never an invented clean finish";

  for (
      const char* body :
      {R"({"candidates":[{"content":{"parts":[{"executableCode":{"code":"x"}}]}}]})",
       R"({"candidates":[{"content":{"parts":[{"inlineData":{"mimeType":"image/png","data":"A"}}]}}]})",
       R"({"candidates":[{"content":{"parts":[{"functionCall":{"name":"f","partialArgs":[]}}]}}]})",
       R"({"candidates":[{"content":{"parts":[{}]}}]})", "[]", "{"}) {
    auto r = decode_response(body);
    ASSERT_FALSE(r.has_value()) << body;
    EXPECT_EQ(r.error().kind(), ErrorKind::kUpstreamProtocol) << body;
  }
}

TEST(EncodeResponse, ShapeForGeminiCallers) {
  ir::Response r;
  r.id = "resp-1";
  r.model = "m";
  r.content.push_back(ir::ContentPart::make_text("Hi"));
  ir::ContentPart call;
  call.kind = ir::PartKind::kToolCall;
  call.id = "toolu_01";
  call.name = "lookup";
  call.arguments = R"({"q":"x"})";
  r.content.push_back(call);
  ir::ContentPart redacted;
  redacted.kind = ir::PartKind::kRedactedReasoning;
  redacted.signature = "opaque";
  r.content.push_back(redacted);
  r.finish = ir::FinishReason::kToolCalls;
  r.usage = ir::Usage{10, 7, 0, 3, 2};
  auto out = encode_response(r);
  ASSERT_TRUE(out.has_value());
  EXPECT_EQ(
      *out,
      R"({"candidates":[{"content":{"parts":[{"text":"Hi"},{"functionCall":{"name":"lookup",)"
      R"("args":{"q":"x"},"id":"toolu_01"}}],"role":"model"},"finishReason":"STOP","index":0}],)"
      R"("usageMetadata":{"promptTokenCount":10,"candidatesTokenCount":5,"totalTokenCount":17,)"
      R"("thoughtsTokenCount":2},"modelVersion":"m","responseId":"resp-1"})");

  ir::Response bad = r;
  bad.content[1].arguments = "[1]";
  EXPECT_FALSE(encode_response(bad).has_value());
  ir::Response image;
  image.content.resize(1);
  image.content[0].kind = ir::PartKind::kImage;
  EXPECT_FALSE(encode_response(image).has_value());
}

TEST(Usage, TheConversionTable) {
  // Gemini -> IR: thoughts outside candidates, cached content inside the prompt, tool-use
  // prompt tokens are input.
  WireUsage w;
  w.prompt = 100;
  w.cached_content = 60;
  w.candidates = 20;
  w.thoughts = 30;
  w.tool_use_prompt = 5;
  w.total = 155;
  auto u = from_wire_usage(w);
  ASSERT_TRUE(u.has_value());
  EXPECT_EQ(*u, (ir::Usage{105, 50, 60, 0, 30}));
  // IR -> Gemini, the inverse (the tool-use share stays in the prompt).
  bool clamped = false;
  const WireUsage back = to_wire_usage(*u, clamped);
  EXPECT_FALSE(clamped);
  EXPECT_EQ(back.prompt, 105u);
  EXPECT_EQ(back.cached_content, 60u);
  EXPECT_EQ(back.candidates, 20u);
  EXPECT_EQ(back.thoughts, 30u);
  EXPECT_EQ(back.total, 155u);
  // Never negative: clamped and flagged.
  const WireUsage clamp = to_wire_usage(ir::Usage{10, 4, 12, 0, 9}, clamped);
  EXPECT_TRUE(clamped);
  EXPECT_EQ(clamp.candidates, 0u);
  EXPECT_EQ(clamp.thoughts, 4u);
  EXPECT_EQ(clamp.cached_content, 10u);
  EXPECT_EQ(clamp.total, 14u);
  // Overflow is an error, not a wrap.
  WireUsage huge;
  huge.prompt = UINT64_MAX;
  huge.tool_use_prompt = 1;
  EXPECT_FALSE(from_wire_usage(huge).has_value());
}

TEST(Errors, StatusNamesAndShape) {
  EXPECT_EQ(status_for_http(400), "INVALID_ARGUMENT");
  EXPECT_EQ(status_for_http(401), "UNAUTHENTICATED");
  EXPECT_EQ(status_for_http(403), "PERMISSION_DENIED");
  EXPECT_EQ(status_for_http(404), "NOT_FOUND");
  EXPECT_EQ(status_for_http(429), "RESOURCE_EXHAUSTED");
  EXPECT_EQ(status_for_http(500), "INTERNAL");
  EXPECT_EQ(status_for_http(503), "UNAVAILABLE");
  EXPECT_EQ(status_for_http(504), "DEADLINE_EXCEEDED");
  EXPECT_EQ(status_for_http(413), "FAILED_PRECONDITION");
  EXPECT_EQ(status_for_http(502), "INTERNAL");
  EXPECT_EQ(status_for_http(529), "UNAVAILABLE");
  EXPECT_EQ(encode_error(Error(ErrorKind::kRateLimited, "slow down")),
            R"({"error":{"code":429,"message":"slow down","status":"RESOURCE_EXHAUSTED"}})");
  // An upstream's own status name survives re-encoding.
  const Error upstream = error_from_wire(400, "no billing", "FAILED_PRECONDITION");
  EXPECT_EQ(upstream.http_status(), 400);
  EXPECT_EQ(encode_error(upstream),
            R"({"error":{"code":400,"message":"no billing","status":"FAILED_PRECONDITION"}})");
  EXPECT_EQ(error_from_wire(700, "odd", "WHATEVER").http_status(), 500);
}

TEST(Conventions, FinishReasonNames) {
  EXPECT_EQ(finish_reason_name(ir::FinishReason::kStop), "STOP");
  EXPECT_EQ(finish_reason_name(ir::FinishReason::kToolCalls), "STOP");
  EXPECT_EQ(finish_reason_name(ir::FinishReason::kLength), "MAX_TOKENS");
  EXPECT_EQ(finish_reason_name(ir::FinishReason::kRefusal), "SAFETY");
  EXPECT_EQ(finish_reason_name(ir::FinishReason::kUnset), "OTHER");
  EXPECT_EQ(finish_reason("STOP", false), ir::FinishReason::kStop);
  EXPECT_EQ(finish_reason("STOP", true), ir::FinishReason::kToolCalls);
  EXPECT_EQ(finish_reason("", false), ir::FinishReason::kUnset);
  EXPECT_EQ(answer_call_id("", 2), "call_2");
  EXPECT_EQ(request_call_id(3, 1), "call_3_1");
}

}  // namespace
}  // namespace sluice::protocol::gemini
