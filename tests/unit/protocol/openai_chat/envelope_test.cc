#include "protocol/openai_chat/envelope.h"

#include <boost/json/parse.hpp>
#include <gtest/gtest.h>

namespace sluice::protocol::openai_chat {
namespace {

TEST(DecodeChatRequest, AcceptsMinimalRequest) {
  auto r = decode_chat_request(R"({"model":"m","messages":[{"role":"user","content":"hi"}]})");
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->model, "m");
  EXPECT_FALSE(r->stream);
  EXPECT_FALSE(r->include_usage);
}

TEST(DecodeChatRequest, ReadsStreamAndUsageOption) {
  auto r = decode_chat_request(
      R"({"model":"m","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"x"}]})");
  ASSERT_TRUE(r.has_value());
  EXPECT_TRUE(r->stream);
  EXPECT_TRUE(r->include_usage);
}

struct BadCase {
  const char* body;
  const char* param;  // expected Error::param(); "" for none
};

class DecodeChatRequestRejects : public ::testing::TestWithParam<BadCase> {};

TEST_P(DecodeChatRequestRejects, WithBadRequestAndParam) {
  auto r = decode_chat_request(GetParam().body);
  ASSERT_FALSE(r.has_value()) << GetParam().body;
  EXPECT_EQ(r.error().kind(), ErrorKind::kBadRequest);
  EXPECT_EQ(r.error().http_status(), 400);
  EXPECT_EQ(r.error().param(), GetParam().param);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, DecodeChatRequestRejects,
    ::testing::Values(
        BadCase{"", ""}, BadCase{"{", ""}, BadCase{"[]", ""},
        BadCase{R"({"messages":[{"role":"user"}]})", "model"},
        BadCase{R"({"model":3,"messages":[{"role":"user"}]})", "model"},
        BadCase{R"({"model":"","messages":[{"role":"user"}]})", "model"},
        BadCase{R"({"model":"m"})", "messages"},
        BadCase{R"({"model":"m","messages":[]})", "messages"},
        BadCase{R"({"model":"m","messages":"hi"})", "messages"},
        BadCase{R"({"model":"m","messages":[{"content":"x"}]})", "messages[0].role"},
        BadCase{R"({"model":"m","messages":[{"role":"user","content":"x"},5]})", "messages[1]"},
        BadCase{R"({"model":"m","messages":[{"role":7,"content":"x"}]})", "messages[0].role"},
        BadCase{R"({"model":"m","messages":[{"role":"user","content":5}]})", "messages[0].content"},
        BadCase{R"({"model":"m","messages":[{"role":"user","content":{"text":"x"}}]})",
                "messages[0].content"},
        BadCase{R"({"model":"m","messages":[{"role":"user","content":true}]})",
                "messages[0].content"},
        BadCase{R"({"model":"m","messages":[{"role":"user","content":["x"]}]})",
                "messages[0].content"},
        BadCase{
            R"({"model":"m","messages":[{"role":"system","content":"s"},{"role":"user","content":[{"type":"text","text":"a"},3]}]})",
            "messages[1].content"},
        BadCase{R"({"model":"m","messages":[{"role":"user"}],"stream":"yes"})", "stream"},
        // Read as infinity or NaN, a number would be written on as "NaN" when the body goes
        // through a DOM (stream_options set for metering): refused wherever it is.
        BadCase{R"({"model":"m","messages":[{"role":"user"}],"x":{"y":[1e999]}})", ""},
        BadCase{R"({"model":"m","messages":[{"role":"user"}],"temperature":0e99999})", ""},
        BadCase{R"({"model":"m","messages":[{"role":"user"}],"stream_options":1})",
                "stream_options"},
        BadCase{
            R"({"model":"m","messages":[{"role":"user"}],"stream_options":{"include_usage":1}})",
            "stream_options.include_usage"}));

// Nesting is bounded at kMaxJsonDepth (64). The bodies are complete, so only depth can fail
// them: a JSON-schema tool definition 40 levels deep is fine, one 80 levels deep is not.
TEST(DecodeChatRequest, BoundsNestingDepth) {
  auto nested = [](std::size_t depth) {
    std::string open, close;
    for (std::size_t i = 0; i < depth; ++i) {
      open += R"({"a":)";
      close += "}";
    }
    return R"({"model":"m","messages":[{"role":"user","content":"x"}],"tools":)" + open + "1" +
           close + "}";
  };
  EXPECT_TRUE(decode_chat_request(nested(40)).has_value())
      << decode_chat_request(nested(40)).error().message();
  auto deep = decode_chat_request(nested(80));
  ASSERT_FALSE(deep.has_value());
  EXPECT_NE(deep.error().message().find("too deep"), std::string::npos) << deep.error().message();
}

// Valid message shapes pass: null content (assistant tool calls), arrays of parts, any role
// string (new roles reach the upstream, which knows them).
TEST(DecodeChatRequest, AcceptsEveryValidMessageShape) {
  auto r = decode_chat_request(
      R"({"model":"m","messages":[{"role":"developer","content":"d"},)"
      R"({"role":"user","content":[{"type":"text","text":"a"},{"type":"image_url","image_url":{"url":"x"}}]},)"
      R"({"role":"assistant","content":null,"tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{}"}}]},)"
      R"({"role":"tool","tool_call_id":"c","content":"r"},{"role":"assistant"}]})");
  EXPECT_TRUE(r.has_value()) << r.error().message();
}

TEST(EncodeUpstreamBody, RewritesModelAndForcesUsageOnStreams) {
  auto r = decode_chat_request(
      R"({"model":"alias","stream":true,"messages":[{"role":"user","content":"x"}],"tools":[{"type":"function","function":{"name":"f"}}]})");
  ASSERT_TRUE(r.has_value());
  auto out = boost::json::parse(encode_upstream_body(*r, "gpt-4o-mini", true));
  EXPECT_EQ(out.at("model").as_string(), "gpt-4o-mini");
  EXPECT_EQ(out.at("stream_options").at("include_usage").as_bool(), true);
  EXPECT_EQ(out.at("tools").as_array().size(), 1u);  // everything else passes through
}

TEST(EncodeUpstreamBody, LeavesNonStreamingRequestsAlone) {
  auto r = decode_chat_request(R"({"model":"alias","messages":[{"role":"user","content":"x"}]})");
  ASSERT_TRUE(r.has_value());
  auto out = boost::json::parse(encode_upstream_body(*r, "up", true));
  EXPECT_FALSE(out.as_object().contains("stream_options"));
}

TEST(DecodeEmbeddingsRequest, AcceptsEveryInputShape) {
  for (const char* body :
       {R"({"model":"e","input":"x"})", R"({"model":"e","input":["a","b"]})",
        R"({"model":"e","input":[1,2,3]})", R"({"model":"e","input":[[1],[2]]})"}) {
    EXPECT_TRUE(decode_embeddings_request(body).has_value()) << body;
  }
  for (const char* body : {R"({"model":"e"})", R"({"model":"e","input":[]})",
                           R"({"model":"e","input":{}})", R"({"model":"e","input":[{}]})"}) {
    auto r = decode_embeddings_request(body);
    ASSERT_FALSE(r.has_value()) << body;
    EXPECT_EQ(r.error().param(), "input");
  }
}

}  // namespace
}  // namespace sluice::protocol::openai_chat

namespace sluice::protocol::openai_chat {
namespace {

// The splice must give the same document as a DOM rewrite, whatever the request's shape.
boost::json::value dom_rewrite(std::string_view body, std::string_view model, bool add_usage) {
  boost::json::value doc = boost::json::parse(body);
  doc.as_object()["model"] = model;
  if (add_usage) {
    auto& so = doc.as_object()["stream_options"];
    if (!so.is_object()) {
      so = boost::json::object();
    }
    so.as_object()["include_usage"] = true;
  }
  return doc;
}

TEST(EncodeUpstreamBody, SpliceMatchesDomRewrite) {
  const char* bodies[] = {
      R"({"model":"alias","messages":[{"role":"user","content":"x"}]})",
      R"(  { "messages" : [ {"role":"user","content":"model"} ] , "model" : "alias" , "n":1 } )",
      R"({"model":"alias","stream":true,"messages":[{"role":"user","content":"x"}]})",
      R"({"stream":true,"model":"alias","stream_options":{},"messages":[{"role":"user"}]})",
      R"({"stream":true,"model":"alias","stream_options":{"include_usage":false},"messages":[{"role":"user"}]})",
      R"({"model":"al\"ias","stream":true,"messages":[{"role":"user"}]})",
      R"({"model":"first","model":"alias","messages":[{"role":"user"}]})",
      R"({"metadata":{"model":"inner"},"model":"alias","messages":[{"role":"user","content":[{"type":"text","text":"{\"model\":1}"}]}]})",
  };
  for (const char* body : bodies) {
    SCOPED_TRACE(body);
    auto r = decode_chat_request(body);
    ASSERT_TRUE(r.has_value()) << r.error().message();
    for (std::string_view target : {"gpt-4o-mini", "we\"ird\\name"}) {
      const std::string out = encode_upstream_body(*r, target, true);
      EXPECT_EQ(boost::json::parse(out), dom_rewrite(body, target, r->stream && !r->include_usage));
    }
  }
}

// Found by tests/fuzz/openai_chat_request_fuzz: a repeated top-level key means its last value,
// as in document() and in the upstream's parser (the model was the values concatenated).
TEST(DecodeChatRequest, RepeatedKeysMeanTheirLastValue) {
  auto r = decode_chat_request(R"({"model":"gpt","model":"-4o","messages":[{"role":"user"}]})");
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->model, "-4o");
  r = decode_chat_request(
      R"({"model":"m","stream":true,"stream":null,"messages":[{"role":"user"}]})");
  ASSERT_TRUE(r.has_value());
  EXPECT_FALSE(r->stream);
}

// Found by tests/fuzz/openai_chat_request_fuzz: whatever stream_options the caller sent, the
// upstream (whose parser keeps the last of repeated members, like Boost.JSON here) must see
// include_usage, or the stream cannot be metered.
TEST(EncodeUpstreamBody, ForcedUsageSurvivesAnyStreamOptions) {
  const char* bodies[] = {
      R"({"model":"m","stream":true,"stream_options":null,"messages":[{"role":"user"}]})",
      R"({"model":"m","stream":true,"stream_options":{"include_usage":true},"stream_options":{},"messages":[{"role":"user"}]})",
  };
  for (const char* body : bodies) {
    SCOPED_TRACE(body);
    auto r = decode_chat_request(body);
    ASSERT_TRUE(r.has_value());
    const auto out = boost::json::parse(encode_upstream_body(*r, "up", true));
    const auto* so = out.as_object().if_contains("stream_options");
    ASSERT_TRUE(so != nullptr && so->is_object());
    const auto* iu = so->as_object().if_contains("include_usage");
    EXPECT_TRUE(iu != nullptr && iu->is_bool() && iu->as_bool());
  }
}

TEST(EncodeUpstreamBody, SplicesWithoutReencodingTheRest) {
  // Whitespace and number formatting of the caller survive: only the model bytes change.
  const std::string body =
      R"({"model": "alias", "temperature": 0.50, "messages": [{"role": "user", "content": "x"}]})";
  auto r = decode_chat_request(body);
  ASSERT_TRUE(r.has_value());
  EXPECT_TRUE(r->spliceable);
  EXPECT_EQ(
      encode_upstream_body(*r, "up", true),
      R"({"model": "up", "temperature": 0.50, "messages": [{"role": "user", "content": "x"}]})");
}

}  // namespace
}  // namespace sluice::protocol::openai_chat
