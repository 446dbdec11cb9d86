#include "protocol/openai_chat/chat_request.h"

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
        BadCase{R"({"model":"m","messages":[{"content":"x"}]})", "messages"},
        BadCase{R"({"model":"m","messages":[{"role":"user"}],"stream":"yes"})", "stream"},
        BadCase{R"({"model":"m","messages":[{"role":"user"}],"stream_options":1})",
                "stream_options"},
        BadCase{
            R"({"model":"m","messages":[{"role":"user"}],"stream_options":{"include_usage":1}})",
            "stream_options.include_usage"}));

TEST(DecodeChatRequest, RejectsDeepNesting) {
  std::string deep(200, '[');
  std::string body = R"({"model":"m","messages":[{"role":"user","content":)" + deep;
  EXPECT_FALSE(decode_chat_request(body).has_value());
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
