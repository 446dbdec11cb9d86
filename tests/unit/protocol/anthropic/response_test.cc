#include "protocol/anthropic/response.h"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <gtest/gtest.h>

#include "../../support/fixtures.h"
#include "protocol/anthropic/conventions.h"

namespace sluice::protocol::anthropic {
namespace {
namespace json = boost::json;

std::string fixture(std::string_view name) { return test::read_fixture("anthropic", name); }

// Fields of a live message the IR does not carry, so a decode -> encode round trip cannot
// reproduce them: top level stop_details, context_management, container; usage.cache_creation
// (the 5m / 1h split), usage.service_tier, usage.inference_geo, usage.server_tool_use;
// content[].caller and content[].citations.
json::value without_uncarried(json::value v) {
  json::object& o = v.as_object();
  for (const char* k : {"stop_details", "context_management", "container"}) {
    o.erase(k);
  }
  json::object& usage = o["usage"].as_object();
  for (const char* k : {"cache_creation", "service_tier", "inference_geo", "server_tool_use"}) {
    usage.erase(k);
  }
  for (json::value& block : o["content"].as_array()) {
    block.as_object().erase("caller");
    block.as_object().erase("citations");
  }
  return v;
}

class ResponseFixture : public ::testing::TestWithParam<const char*> {};

TEST_P(ResponseFixture, DecodeThenEncodeReproducesTheMessage) {
  const std::string body = fixture(GetParam());
  ASSERT_FALSE(body.empty());
  auto decoded = decode_response(body);
  ASSERT_TRUE(decoded.has_value()) << decoded.error().message();
  auto encoded = encode_response(*decoded);
  ASSERT_TRUE(encoded.has_value()) << encoded.error().message();
  boost::system::error_code ec;
  json::value got = json::parse(*encoded, ec);
  ASSERT_FALSE(ec) << *encoded;
  json::value want = without_uncarried(json::parse(body));
  EXPECT_EQ(got, want) << "got:  " << *encoded << "\nwant: " << json::serialize(want);
}

INSTANTIATE_TEST_SUITE_P(Anthropic, ResponseFixture,
                         ::testing::Values("message-text.json", "message-thinking.json",
                                           "message-tool-use.json",
                                           "message-parallel-tool-use.json",
                                           "message-cache-read-and-write.json"));

TEST(DecodeResponse, UsageInputIncludesCacheReadsAndWrites) {
  auto r = decode_response(fixture("message-cache-read-and-write.json"));
  ASSERT_TRUE(r.has_value());
  ASSERT_TRUE(r->usage.has_value());
  EXPECT_EQ(r->usage->input_tokens, 3u + 418u + 1111u);
  EXPECT_EQ(r->usage->cache_write_tokens, 418u);
  EXPECT_EQ(r->usage->cache_read_tokens, 1111u);
  EXPECT_EQ(r->usage->output_tokens, 33u);
  EXPECT_EQ(r->finish, ir::FinishReason::kStop);
}

TEST(DecodeResponse, ToolUseAndThinkingParts) {
  auto tools = decode_response(fixture("message-parallel-tool-use.json"));
  ASSERT_TRUE(tools.has_value());
  ASSERT_EQ(tools->content.size(), 5u);
  EXPECT_EQ(tools->content[1].kind, ir::PartKind::kToolCall);
  EXPECT_EQ(tools->content[1].id, "toolu_0167cfEnoQaPviGdVXA95zcu");
  EXPECT_EQ(tools->content[1].arguments, R"({"name":"Alice"})");
  EXPECT_EQ(tools->finish, ir::FinishReason::kToolCalls);

  auto thinking = decode_response(fixture("message-thinking.json"));
  ASSERT_TRUE(thinking.has_value());
  EXPECT_EQ(thinking->content[0].kind, ir::PartKind::kReasoning);
  EXPECT_EQ(thinking->content[0].text, "925 divided by 5 = 185");
  EXPECT_FALSE(thinking->content[0].signature.empty());
}

TEST(DecodeResponse, RejectsWhatTheIrCannotCarryAndBrokenBodies) {
  auto server_tool = decode_response(
      R"({"id":"msg_1","model":"m","content":[{"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{}}],"stop_reason":"end_turn","usage":{"input_tokens":1,"output_tokens":1}})");
  ASSERT_FALSE(server_tool.has_value());
  EXPECT_EQ(server_tool.error().kind(), ErrorKind::kUpstreamProtocol);
  EXPECT_EQ(server_tool.error().message(), "cannot translate content block 'server_tool_use'");

  EXPECT_FALSE(decode_response("{").has_value());
  EXPECT_FALSE(decode_response("[]").has_value());
  EXPECT_FALSE(decode_response(R"({"id":"x","model":"m"})").has_value());
  EXPECT_FALSE(
      decode_response(
          R"({"id":"x","model":"m","content":[],"usage":{"input_tokens":-1,"output_tokens":1}})")
          .has_value());
}

TEST(DecodeResponse, ErrorBodyBecomesTheUpstreamError) {
  auto r = decode_response(fixture("error-404-not-found.json"));
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().kind(), ErrorKind::kUpstreamStatus);
  EXPECT_EQ(r.error().http_status(), 404);
  EXPECT_EQ(r.error().code(), "not_found_error");
  EXPECT_EQ(r.error().message(), "model: claude-does-not-exist");
}

ir::Response simple() {
  ir::Response r;
  r.id = "chatcmpl-123";
  r.model = "gpt-4o";
  r.content.push_back(ir::ContentPart::make_text("hi"));
  r.finish = ir::FinishReason::kStop;
  return r;
}

TEST(EncodeResponse, ConvertsUsageToAnthropicSemantics) {
  ir::Response r = simple();
  r.usage = ir::Usage{
      .input_tokens = 100, .output_tokens = 7, .cache_read_tokens = 60, .cache_write_tokens = 30};
  auto out = encode_response(r);
  ASSERT_TRUE(out.has_value());
  json::value v = json::parse(*out);
  EXPECT_EQ(v.at("id"), "msg_chatcmpl-123");
  EXPECT_EQ(v.at("usage").at("input_tokens"), 10);
  EXPECT_EQ(v.at("usage").at("cache_read_input_tokens"), 60);
  EXPECT_EQ(v.at("usage").at("cache_creation_input_tokens"), 30);
  EXPECT_EQ(v.at("usage").at("output_tokens"), 7);
  EXPECT_TRUE(v.at("stop_sequence").is_null());
}

// A paid answer is never turned into an error by its usage: counts that cannot be expressed
// are clamped (never negative, never wrapped) and the anomaly is reported for metering.
TEST(EncodeResponse, InconsistentUsageIsClampedAndReported) {
  ir::Response r = simple();
  r.usage = ir::Usage{
      .input_tokens = 50, .output_tokens = 7, .cache_read_tokens = 40, .cache_write_tokens = 20};
  bool clamped = false;
  auto out = encode_response(r, &clamped);
  ASSERT_TRUE(out.has_value()) << out.error().message();
  EXPECT_TRUE(clamped);
  json::value v = json::parse(*out);
  EXPECT_EQ(v.at("usage").at("input_tokens"), 0);
  EXPECT_EQ(v.at("usage").at("cache_read_input_tokens"), 40);
  EXPECT_EQ(v.at("usage").at("cache_creation_input_tokens"), 20);
  EXPECT_EQ(v.at("usage").at("output_tokens"), 7);

  r.usage = ir::Usage{.input_tokens = 70, .output_tokens = 7, .cache_read_tokens = 40};
  clamped = false;
  ASSERT_TRUE(encode_response(r, &clamped).has_value());
  EXPECT_FALSE(clamped);
}

TEST(EncodeResponse, ToolArgumentsMustBeAJsonObject) {
  for (const char* bad : {"[1]", "not json", "{\"a\":", "\"s\""}) {
    ir::Response r = simple();
    ir::ContentPart call;
    call.kind = ir::PartKind::kToolCall;
    call.id = "call_1";
    call.name = "f";
    call.arguments = bad;
    r.content.push_back(call);
    auto out = encode_response(r);
    ASSERT_FALSE(out.has_value()) << bad;
    EXPECT_EQ(out.error().kind(), ErrorKind::kUpstreamProtocol);
  }
}

TEST(EncodeResponse, ToolIdsAreMappedDeterministicallyAndEmptyArgumentsAreAnObject) {
  ir::Response r = simple();
  ir::ContentPart call;
  call.kind = ir::PartKind::kToolCall;
  call.id = "call_abc";
  call.name = "f";
  r.content.push_back(call);
  call.id = "";
  call.arguments = R"( {"x": 1} )";
  r.content.push_back(call);
  r.finish = ir::FinishReason::kToolCalls;
  auto first = encode_response(r);
  auto second = encode_response(r);
  ASSERT_TRUE(first.has_value());
  ASSERT_TRUE(second.has_value());
  EXPECT_EQ(*first, *second);
  json::value v = json::parse(*first);
  const json::array& content = v.at("content").as_array();
  EXPECT_EQ(content[1].at("id"), "toolu_call_abc");
  EXPECT_EQ(content[1].at("input"), json::object());
  EXPECT_EQ(content[2].at("id"), "toolu_msg_chatcmpl-123_1");
  EXPECT_EQ(content[2].at("input").at("x"), 1);
  EXPECT_EQ(v.at("stop_reason"), "tool_use");
}

TEST(EncodeResponse, StopReasonsAndStopSequence) {
  struct Case {
    ir::FinishReason finish;
    const char* reason;
  };
  const Case cases[] = {
      {ir::FinishReason::kStop, "end_turn"},
      {ir::FinishReason::kLength, "max_tokens"},
      {ir::FinishReason::kToolCalls, "tool_use"},
      {ir::FinishReason::kPauseTurn, "pause_turn"},
      {ir::FinishReason::kRefusal, "refusal"},
      {ir::FinishReason::kContentFilter, "refusal"},
      {ir::FinishReason::kUnset, "end_turn"},
      {ir::FinishReason::kOther, "end_turn"},
      {ir::FinishReason::kStopSequence, "stop_sequence"},
  };
  for (const Case& c : cases) {
    ir::Response r = simple();
    r.finish = c.finish;
    r.stop_sequence = "###";
    auto out = encode_response(r);
    ASSERT_TRUE(out.has_value());
    json::value v = json::parse(*out);
    EXPECT_EQ(v.at("stop_reason"), c.reason);
    if (c.finish == ir::FinishReason::kStopSequence) {
      EXPECT_EQ(v.at("stop_sequence"), "###");
    } else {
      EXPECT_TRUE(v.at("stop_sequence").is_null());
    }
  }
}

TEST(EncodeResponse, RedactedThinkingAndEscaping) {
  ir::Response r = simple();
  r.content.clear();
  ir::ContentPart red;
  red.kind = ir::PartKind::kRedactedReasoning;
  red.signature = "opaque";
  r.content.push_back(red);
  r.content.push_back(ir::ContentPart::make_text("quote \" backslash \\ newline \n tab \t \x01"));
  auto out = encode_response(r);
  ASSERT_TRUE(out.has_value());
  json::value v = json::parse(*out);
  EXPECT_EQ(v.at("content").at(0).at("type"), "redacted_thinking");
  EXPECT_EQ(v.at("content").at(0).at("data"), "opaque");
  EXPECT_EQ(v.at("content").at(1).at("text"), "quote \" backslash \\ newline \n tab \t \x01");
}

TEST(Conventions, ToolIdMapping) {
  EXPECT_EQ(tool_use_id("toolu_01TyLXoWW1gujar8anh7KHHN"), "toolu_01TyLXoWW1gujar8anh7KHHN");
  EXPECT_EQ(tool_use_id("call_abc-1"), "toolu_call_abc-1");
  EXPECT_EQ(tool_use_id("tooluse_xyz"), "toolu_tooluse_xyz");
  const std::string colon = tool_use_id("call:1");
  const std::string dot = tool_use_id("call.1");
  EXPECT_EQ(colon.rfind("toolu_call_1_", 0), 0u) << colon;
  EXPECT_EQ(colon.size(), std::string("toolu_call_1_").size() + 16);
  EXPECT_NE(colon, dot);                    // sanitising alone would collide
  EXPECT_EQ(colon, tool_use_id("call:1"));  // deterministic
  EXPECT_EQ(tool_use_id(""), "");
  EXPECT_EQ(tool_use_id_or("", "msg_1_0"), "toolu_msg_1_0");
  for (char c : tool_use_id("a b/c+d=é")) {
    EXPECT_TRUE(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-') << c;
  }
}

TEST(Conventions, MessageIdAndStopReasonMapping) {
  EXPECT_EQ(message_id("msg_01"), "msg_01");
  EXPECT_EQ(message_id("chatcmpl-9"), "msg_chatcmpl-9");
  EXPECT_EQ(finish_reason("end_turn"), ir::FinishReason::kStop);
  EXPECT_EQ(finish_reason("max_tokens"), ir::FinishReason::kLength);
  EXPECT_EQ(finish_reason("tool_use"), ir::FinishReason::kToolCalls);
  EXPECT_EQ(finish_reason("stop_sequence"), ir::FinishReason::kStopSequence);
  EXPECT_EQ(finish_reason("pause_turn"), ir::FinishReason::kPauseTurn);
  EXPECT_EQ(finish_reason("refusal"), ir::FinishReason::kRefusal);
  EXPECT_EQ(finish_reason("something_new"), ir::FinishReason::kOther);
  EXPECT_EQ(finish_reason(""), ir::FinishReason::kUnset);
}

TEST(Conventions, UsageConversionRoundTripsAndRefusesNegatives) {
  WireUsage w{.input_tokens = 3,
              .cache_creation_input_tokens = 418,
              .cache_read_input_tokens = 1111,
              .output_tokens = 33};
  auto ir_usage = from_wire_usage(w);
  ASSERT_TRUE(ir_usage.has_value());
  EXPECT_EQ(ir_usage->input_tokens, 1532u);
  auto back = to_wire_usage(*ir_usage);
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->input_tokens, 3u);
  EXPECT_EQ(back->cache_creation_input_tokens, 418u);
  EXPECT_EQ(back->cache_read_input_tokens, 1111u);

  EXPECT_FALSE(to_wire_usage(ir::Usage{.input_tokens = 1, .cache_read_tokens = 2}).has_value());
  EXPECT_FALSE(to_wire_usage(ir::Usage{.input_tokens = 10,
                                       .cache_read_tokens = ~std::uint64_t{0},
                                       .cache_write_tokens = 2})
                   .has_value());
  EXPECT_FALSE(
      from_wire_usage(WireUsage{.input_tokens = ~std::uint64_t{0}, .cache_read_input_tokens = 1})
          .has_value());
}

}  // namespace
}  // namespace sluice::protocol::anthropic
