#include "protocol/gemini/ingress.h"

#include <string>
#include <utility>
#include <vector>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <gtest/gtest.h>

#include "../../support/fake_head.h"
#include "gemini_test_support.h"
#include "protocol/registry.h"

namespace sluice::protocol::gemini {
namespace {
namespace json = boost::json;

using Head = sluice::test::FakeHead;

const GeminiIngress kIngress;
constexpr std::string_view kBody = R"({"contents":[{"role":"user","parts":[{"text":"hi"}]}]})";

TEST(GeminiIngress, ServesGenerateContentPathsThroughTheRegistry) {
  for (const char* path :
       {"/v1beta/models/gemini-2.5-flash:generateContent",
        "/v1beta/models/gemini-2.5-flash:streamGenerateContent",
        "/v1/models/my-alias:generateContent", "/v1beta/models/team%2Fmodel:generateContent"}) {
    const IngressCodec* codec = find_ingress(path);
    ASSERT_NE(codec, nullptr) << path;
    EXPECT_EQ(codec->protocol(), "gemini") << path;
  }
  for (const char* path :
       {"/v1beta/models/x:countTokens", "/v1beta/models", "/v1beta/models/",
        "/v1beta/models/:generateContent", "/v1/models", "/v1beta/models/x:embedContent"}) {
    EXPECT_EQ(find_ingress(path), nullptr) << path;
  }
  // Other protocols keep their exact paths.
  EXPECT_EQ(find_ingress("/v1/messages")->protocol(), "anthropic_messages");
}

TEST(GeminiIngress, ModelAndStreamComeFromTheUrl) {
  auto plain = kIngress.decode(kBody, Head("/v1beta/models/team%2Fmodel%3Av2:generateContent"));
  ASSERT_TRUE(plain.has_value()) << plain.error().message();
  EXPECT_EQ(plain->model, "team/model:v2");
  EXPECT_FALSE(plain->stream);
  EXPECT_TRUE(plain->include_usage);
  EXPECT_EQ(kIngress.passthrough_body(*plain, "upstream-model"), kBody) << "bytes unchanged";

  auto stream = kIngress.decode(kBody, Head("/v1beta/models/m:streamGenerateContent?alt=sse"));
  ASSERT_TRUE(stream.has_value());
  EXPECT_TRUE(stream->stream);
  auto ir = kIngress.to_ir(*stream);
  ASSERT_TRUE(ir.has_value());
  EXPECT_EQ(ir->model, "m");
  EXPECT_TRUE(ir->stream);
}

TEST(GeminiIngress, StreamsOnlyWithAltSse) {
  for (const char* target : {"/v1beta/models/m:streamGenerateContent",
                             "/v1beta/models/m:streamGenerateContent?alt=json"}) {
    auto r = kIngress.decode(kBody, Head(target));
    ASSERT_FALSE(r.has_value()) << target;
    EXPECT_EQ(r.error().kind(), ErrorKind::kBadRequest);
    EXPECT_NE(r.error().message().find("alt=sse"), std::string::npos);
    const ErrorReply reply = kIngress.encode_error(r.error());
    EXPECT_EQ(reply.status, 400);
    const json::value body = json::parse(reply.body);
    EXPECT_EQ(body.at("error").at("status"), "INVALID_ARGUMENT");
    EXPECT_EQ(body.at("error").at("code"), 400);
  }
  EXPECT_TRUE(kIngress.decode(kBody, Head("/v1beta/models/m:streamGenerateContent?key=k&alt=sse")));
}

TEST(GeminiIngress, BodyChecks) {
  const Head head("/v1beta/models/m:generateContent");
  for (std::string_view body :
       {std::string_view(""), std::string_view("{"), std::string_view("[]"), std::string_view("{}"),
        std::string_view(R"({"contents":[]})"), std::string_view(R"({"contents":{}})")}) {
    auto r = kIngress.decode(body, head);
    ASSERT_FALSE(r.has_value()) << body;
    EXPECT_EQ(r.error().kind(), ErrorKind::kBadRequest) << body;
  }
}

TEST(GeminiIngress, TheCallersKey) {
  EXPECT_EQ(kIngress.credential(
                Head("/v1beta/models/m:generateContent", {{"x-goog-api-key", "k-header"}})),
            "k-header");
  EXPECT_EQ(kIngress.credential(Head("/v1beta/models/m:streamGenerateContent?alt=sse&key=k-q")),
            "k-q");
  EXPECT_EQ(kIngress.credential(
                Head("/v1beta/models/m:generateContent", {{"authorization", "Bearer k-bearer"}})),
            "k-bearer");
  EXPECT_EQ(kIngress.credential(Head("/v1beta/models/m:generateContent?keyx=1")), "");
}

TEST(GeminiIngress, ModelListAndErrors) {
  EXPECT_TRUE(kIngress.claims_model_listing(Head("/v1beta/models?pageSize=50", {}, "GET")));
  EXPECT_FALSE(kIngress.claims_model_listing(Head("/v1/models", {}, "GET")));
  const std::string_view aliases[] = {"fast", "smart"};
  EXPECT_EQ(
      kIngress.encode_model_list(aliases),
      R"({"models":[{"name":"models/fast","displayName":"fast","supportedGenerationMethods":)"
      R"(["generateContent","streamGenerateContent"]},{"name":"models/smart","displayName":)"
      R"("smart","supportedGenerationMethods":["generateContent","streamGenerateContent"]}]})");
  EXPECT_EQ(kIngress.encode_model_list({}), R"({"models":[]})");

  EXPECT_TRUE(kIngress.is_native_error(test::fixture("error-404-not-found.json")));
  EXPECT_TRUE(kIngress.is_native_error(test::fixture("error-400-invalid-argument.json")));
  EXPECT_FALSE(kIngress.is_native_error(
      R"({"type":"error","error":{"type":"overloaded_error","message":"x"}})"));
  EXPECT_FALSE(kIngress.is_native_error(
      R"({"error":{"message":"x","type":"invalid_request_error","param":null,"code":null}})"));

  const ErrorReply reply = kIngress.encode_error(
      Error(ErrorKind::kUnauthorized, "invalid API key").with_code("invalid_api_key"));
  EXPECT_EQ(reply.status, 401);
  EXPECT_EQ(reply.body,
            R"({"error":{"code":401,"message":"invalid API key","status":"UNAUTHENTICATED"}})");
  std::string out;
  kIngress.append_stream_error(Error(ErrorKind::kUpstreamProtocol, "cut"), out);
  EXPECT_EQ(out,
            "data: {\"error\":{\"code\":502,\"message\":\"cut\",\"status\":\"INTERNAL\"}}\r\n\r\n");
}

TEST(GeminiIngress, UsageOfABodyRelayedVerbatim) {
  auto usage = kIngress.usage_of_body(test::fixture("generate-content-cached-content.json"));
  ASSERT_TRUE(usage.has_value());
  EXPECT_EQ(*usage, (ir::Usage{3520, 44, 3512, 0, 42}));
  EXPECT_FALSE(kIngress.usage_of_body("{}").has_value());
  EXPECT_FALSE(kIngress.usage_of_body("nope").has_value());
}

}  // namespace
}  // namespace sluice::protocol::gemini
