#include "protocol/openai_responses/response.h"

#include <string>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <gtest/gtest.h>

#include "helpers.h"
#include "protocol/openai_responses/conventions.h"
#include "protocol/openai_responses/errors.h"

namespace sluice::protocol::openai_responses {
namespace {
namespace json = boost::json;
using ir::PartKind;
using testing::fixture;

ir::Response decode_ok(std::string_view body) {
  auto r = decode_response(body);
  EXPECT_TRUE(r) << (r ? "" : r.error().message());
  return r ? *r : ir::Response{};
}

TEST(ResponsesResponse, TextFixture) {
  const ir::Response r = decode_ok(fixture("response-text.json"));
  EXPECT_EQ(r.id, "resp_0e9950da9eac6a780068fbaa1bc030819da585a6f85ddad1e6");
  EXPECT_EQ(r.model, "gpt-4o-2024-08-06");
  EXPECT_EQ(r.created, 1761323547);
  ASSERT_EQ(r.content.size(), 1u);
  EXPECT_EQ(r.content[0].kind, PartKind::kText);
  EXPECT_EQ(r.content[0].text, "The capital of PotatoLand is Potato City.");
  EXPECT_EQ(r.finish, ir::FinishReason::kStop);
  EXPECT_EQ(*r.usage, (ir::Usage{67, 11, 0, 0, 0}));
}

TEST(ResponsesResponse, FunctionCallFixture) {
  const ir::Response r = decode_ok(fixture("response-function-call.json"));
  ASSERT_EQ(r.content.size(), 1u);
  EXPECT_EQ(r.content[0].kind, PartKind::kToolCall);
  EXPECT_EQ(r.content[0].id, "call_YfwRsW8sUxDKipwyhWTzOXCA");  // call_id, not fc_...
  EXPECT_EQ(r.content[0].name, "get_capital");
  EXPECT_EQ(r.content[0].arguments, R"({"country":"PotatoLand"})");
  EXPECT_EQ(r.finish, ir::FinishReason::kToolCalls);
  EXPECT_EQ(*r.usage, (ir::Usage{40, 18, 0, 0, 0}));
}

TEST(ResponsesResponse, ReasoningFixtureKeepsReasoningTokensInsideOutput) {
  const ir::Response r = decode_ok(fixture("response-reasoning.json"));
  ASSERT_EQ(r.content.size(), 2u);
  EXPECT_EQ(r.content[0].kind, PartKind::kReasoning);  // summary [] and no encryption: a marker
  EXPECT_EQ(r.content[0].id, "rs_67e539329f808191ae793066c0ee20800e395386ebcf3a62");
  EXPECT_EQ(r.content[0].text, "");
  EXPECT_EQ(r.content[1].kind, PartKind::kText);
  EXPECT_TRUE(r.content[1].text.starts_with("Ingredients for the dough:"));
  EXPECT_EQ(*r.usage, (ir::Usage{88, 547, 0, 0, 128}));
}

TEST(ResponsesResponse, ErrorFixtureIsTheUpstreamError) {
  auto r = decode_response(fixture("error-400-invalid-temperature.json"));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().kind(), ErrorKind::kUpstreamStatus);
  EXPECT_EQ(r.error().http_status(), 400);
  EXPECT_EQ(r.error().code(), "decimal_below_min_value");
  EXPECT_EQ(r.error().param(), "temperature");
  EXPECT_TRUE(is_error_body(fixture("error-400-invalid-temperature.json")));
  EXPECT_FALSE(is_error_body(fixture("response-text.json")));
}

TEST(ResponsesResponse, StatusesAndUnsupportedItems) {
  auto r = decode_ok(R"({"id":"resp_1","status":"incomplete","model":"m",
    "incomplete_details":{"reason":"max_output_tokens"},"output":[]})");
  EXPECT_EQ(r.finish, ir::FinishReason::kLength);
  EXPECT_FALSE(r.usage);
  r = decode_ok(R"({"status":"incomplete","incomplete_details":{"reason":"content_filter"},
                    "output":[]})");
  EXPECT_EQ(r.finish, ir::FinishReason::kContentFilter);
  auto failed = decode_response(
      R"({"id":"r","status":"failed","error":{"code":"server_error","message":"boom"},"output":[]})");
  ASSERT_FALSE(failed);
  EXPECT_EQ(failed.error().http_status(), 500);
  EXPECT_EQ(failed.error().message(), "boom");
  auto queued = decode_response(R"({"id":"r","status":"queued","output":[]})");
  ASSERT_FALSE(queued);
  EXPECT_EQ(queued.error().kind(), ErrorKind::kUpstreamProtocol);
  auto search = decode_response(
      R"({"status":"completed","output":[{"type":"web_search_call","id":"ws","status":"completed"}]})");
  ASSERT_FALSE(search);
  EXPECT_EQ(search.error().message(), "cannot translate output item 'web_search_call'");
  EXPECT_FALSE(decode_response("[]"));
  EXPECT_FALSE(decode_response("{"));
  EXPECT_FALSE(decode_response(R"({"status":"completed","usage":{"input_tokens":-1}})"));
}

// Usage table: the IR and Responses count alike, so every figure maps one to one.
TEST(ResponsesResponse, UsageTable) {
  struct Row {
    std::string_view wire;
    ir::Usage ir;
  };
  for (
      const Row& row : {
          Row{R"({"input_tokens":9463,"input_tokens_details":{"cached_tokens":8320},
                   "output_tokens":582,"output_tokens_details":{"reasoning_tokens":512},
                   "total_tokens":10045})",
              {9463, 582, 8320, 0, 512}},
          Row{R"({"input_tokens":100,"input_tokens_details":{"cached_tokens":10,"cache_write_tokens":30},
                   "output_tokens":7,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":107})",
              {100, 7, 10, 30, 0}},
          Row{R"({"input_tokens":5,"output_tokens":1})", {5, 1, 0, 0, 0}},
      }) {
    auto usage = read_usage(json::parse(row.wire));
    ASSERT_TRUE(usage);
    EXPECT_EQ(*usage, row.ir);
    std::string written;
    append_usage_json(written, row.ir);
    const json::value back = json::parse(written);
    EXPECT_EQ(*read_usage(back), row.ir);
    EXPECT_EQ(back.at("total_tokens").as_int64(),
              static_cast<std::int64_t>(row.ir.input_tokens + row.ir.output_tokens));
  }
}

ir::Response sample() {
  ir::Response r;
  r.id = "msg_01XYZ";
  r.model = "claude-sonnet";
  ir::ContentPart thinking;
  thinking.kind = PartKind::kReasoning;
  thinking.text = "Consider.";
  thinking.signature = "sig";
  r.content.push_back(thinking);
  ir::ContentPart redacted;
  redacted.kind = PartKind::kRedactedReasoning;
  redacted.signature = "opaque";
  r.content.push_back(redacted);
  r.content.push_back(ir::ContentPart::make_text("Part one. "));
  r.content.push_back(ir::ContentPart::make_text("Part two."));
  ir::ContentPart call;
  call.kind = PartKind::kToolCall;
  call.id = "toolu_1";
  call.name = "lookup";
  call.arguments = R"({"q":"x"})";
  r.content.push_back(call);
  ir::ContentPart anonymous = call;
  anonymous.id.clear();
  anonymous.arguments.clear();
  r.content.push_back(anonymous);
  r.finish = ir::FinishReason::kToolCalls;
  r.usage = ir::Usage{100, 50, 20, 5, 10};
  return r;
}

TEST(ResponsesResponse, EncodesTheIr) {
  auto encoded = encode_response(sample(), 1700000000);
  ASSERT_TRUE(encoded) << encoded.error().message();
  const json::value body = json::parse(*encoded);
  EXPECT_EQ(body.at("id").as_string(), "resp_msg_01XYZ");
  EXPECT_EQ(body.at("object").as_string(), "response");
  EXPECT_EQ(body.at("status").as_string(), "completed");
  EXPECT_EQ(body.at("created_at").as_int64(), 1700000000);
  EXPECT_TRUE(body.at("incomplete_details").is_null());
  const json::array& output = body.at("output").as_array();
  ASSERT_EQ(output.size(), 5u);
  EXPECT_EQ(output[0], json::parse(R"({"type":"reasoning","id":"rs_msg_01XYZ_0","summary":[
      {"type":"summary_text","text":"Consider."}],"encrypted_content":"sig"})"));
  EXPECT_EQ(output[1], json::parse(R"({"type":"reasoning","id":"rs_msg_01XYZ_1","summary":[],
      "encrypted_content":"opaque"})"));
  EXPECT_EQ(output[2].at("type").as_string(), "message");
  EXPECT_EQ(output[2].at("content").as_array().size(), 2u);
  EXPECT_EQ(output[3].at("call_id").as_string(), "toolu_1");
  EXPECT_EQ(output[3].at("id").as_string(), "fc_msg_01XYZ_3");
  EXPECT_EQ(output[4].at("call_id").as_string(), "call_msg_01XYZ_1");
  EXPECT_EQ(output[4].at("arguments").as_string(), "{}");
  const json::value& usage = body.at("usage");
  EXPECT_EQ(usage.at("input_tokens").as_int64(), 100);
  EXPECT_EQ(usage.at("input_tokens_details").at("cached_tokens").as_int64(), 20);
  EXPECT_EQ(usage.at("input_tokens_details").at("cache_write_tokens").as_int64(), 5);
  EXPECT_EQ(usage.at("output_tokens_details").at("reasoning_tokens").as_int64(), 10);
  EXPECT_EQ(usage.at("total_tokens").as_int64(), 150);

  // And back: the same parts (reasoning ids are now the encoder's), finish and usage.
  const ir::Response back = decode_ok(*encoded);
  ASSERT_EQ(back.content.size(), 6u);
  EXPECT_EQ(back.content[0].text, "Consider.");
  EXPECT_EQ(back.content[0].signature, "sig");
  EXPECT_EQ(back.content[1].kind, PartKind::kRedactedReasoning);
  EXPECT_EQ(back.content[1].signature, "opaque");
  EXPECT_EQ(back.content[2].text, "Part one. ");
  EXPECT_EQ(back.content[3].text, "Part two.");
  EXPECT_EQ(back.content[4].id, "toolu_1");
  EXPECT_EQ(back.finish, ir::FinishReason::kToolCalls);
  EXPECT_EQ(back.usage, sample().usage);
}

TEST(ResponsesResponse, LengthIsIncompleteAndNoUsageIsNull) {
  ir::Response r;
  r.id = "resp_abc";
  r.content.push_back(ir::ContentPart::make_text("cut"));
  r.finish = ir::FinishReason::kLength;
  const json::value body = json::parse(*encode_response(r, 1));
  EXPECT_EQ(body.at("id").as_string(), "resp_abc");
  EXPECT_EQ(body.at("status").as_string(), "incomplete");
  EXPECT_EQ(body.at("incomplete_details").at("reason").as_string(), "max_output_tokens");
  EXPECT_TRUE(body.at("usage").is_null());
  EXPECT_EQ(decode_ok(json::serialize(body)).finish, ir::FinishReason::kLength);
}

TEST(ResponsesResponse, ImagesCannotBeAnswered) {
  ir::Response r;
  ir::ContentPart image;
  image.kind = PartKind::kImage;
  r.content.push_back(image);
  EXPECT_FALSE(encode_response(r, 1));
}

TEST(ResponsesResponse, FixturesRoundTripThroughTheEncoder) {
  for (const char* name :
       {"response-text.json", "response-function-call.json", "response-reasoning.json"}) {
    SCOPED_TRACE(name);
    const ir::Response r = decode_ok(fixture(name));
    auto encoded = encode_response(r, r.created);
    ASSERT_TRUE(encoded);
    const ir::Response back = decode_ok(*encoded);
    EXPECT_EQ(back.id, r.id);
    EXPECT_EQ(back.model, r.model);
    EXPECT_EQ(back.created, r.created);
    EXPECT_EQ(back.finish, r.finish);
    EXPECT_EQ(back.usage, r.usage);
    ASSERT_EQ(back.content.size(), r.content.size());
    for (std::size_t i = 0; i < r.content.size(); ++i) {
      EXPECT_EQ(back.content[i].kind, r.content[i].kind);
      EXPECT_EQ(back.content[i].text, r.content[i].text);
      EXPECT_EQ(back.content[i].id, r.content[i].id);
      EXPECT_EQ(back.content[i].arguments, r.content[i].arguments);
    }
  }
}

}  // namespace
}  // namespace sluice::protocol::openai_responses
