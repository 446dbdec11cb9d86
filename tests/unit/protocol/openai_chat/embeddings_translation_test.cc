// OpenAI embeddings callers translated (protocol/openai_chat/embeddings_ingress.h): the body
// as ir::Embed, and IR vectors back as OpenAI's list, in numbers or in base64.

#include <bit>
#include <cstring>
#include <string>

#include <boost/json/parse.hpp>
#include <gtest/gtest.h>

#include "../../support/fake_head.h"
#include "codec/base64.h"
#include "protocol/openai_chat/embeddings_ingress.h"

namespace sluice::protocol::openai_chat {
namespace {
namespace json = boost::json;

const EmbeddingsIngress kIngress;

struct Decoded {
  std::string body;
  IngressRequest request;
};

// The body stays alive beside the request, which views it.
std::unique_ptr<Decoded> decode(std::string body) {
  auto d = std::make_unique<Decoded>();
  d->body = std::move(body);
  const test::FakeHead head("/v1/embeddings");
  auto r = kIngress.decode(d->body, head);
  EXPECT_TRUE(r) << r.error().message();
  if (r) {
    d->request = std::move(*r);
  }
  return d;
}

TEST(EmbeddingsToIr, ReadsTextsDimensionsUserAndInputType) {
  auto d = decode(
      R"({"model":"titan","input":["a","b"],"dimensions":256,"user":"u1","input_type":"search_query"})");
  auto ir = kIngress.to_ir(d->request);
  ASSERT_TRUE(ir) << ir.error().message();
  EXPECT_EQ(ir->model, "titan");
  EXPECT_EQ(ir->embed.inputs, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(ir->embed.dimensions, 256u);
  EXPECT_EQ(ir->embed.input_type, "search_query");
  EXPECT_EQ(ir->user, "u1");
  EXPECT_TRUE(ir->messages.empty());

  auto one = decode(R"({"model":"titan","input":"just one"})");
  auto single = kIngress.to_ir(one->request);
  ASSERT_TRUE(single);
  EXPECT_EQ(single->embed.inputs, (std::vector<std::string>{"just one"}));
  EXPECT_FALSE(single->embed.dimensions);
}

TEST(EmbeddingsToIr, TokenIdsCannotBeTranslated) {
  for (std::string body : {R"({"model":"m","input":[1,2,3]})", R"({"model":"m","input":[[1,2]]})",
                           R"({"model":"m","input":["a",[1]]})"}) {
    auto d = decode(body);
    auto ir = kIngress.to_ir(d->request);
    ASSERT_FALSE(ir) << body;
    EXPECT_EQ(ir.error().kind(), ErrorKind::kBadRequest);
    EXPECT_EQ(ir.error().code(), "translation_unsupported");
    EXPECT_EQ(ir.error().param(), "input");
  }
}

TEST(EmbeddingsToIr, BadValuesAreTheCallersErrorNamingTheField) {
  const std::pair<std::string, std::string> cases[] = {
      {R"({"model":"m","input":"a","dimensions":0})", "dimensions"},
      {R"({"model":"m","input":"a","dimensions":"8"})", "dimensions"},
      {R"({"model":"m","input":"a","encoding_format":"int8"})", "encoding_format"},
      {R"({"model":"m","input":"a","input_type":7})", "input_type"},
  };
  for (const auto& [body, param] : cases) {
    auto d = decode(body);
    auto ir = kIngress.to_ir(d->request);
    ASSERT_FALSE(ir) << body;
    EXPECT_EQ(ir.error().kind(), ErrorKind::kBadRequest) << body;
    EXPECT_EQ(ir.error().param(), param) << body;
  }
}

ir::Response two_vectors() {
  ir::Response r;
  r.embeddings = {{0.1208660751581192, -0.5}, {0.25, 1e-7}};
  r.usage = ir::Usage{.input_tokens = 9};
  return r;
}

TEST(EmbeddingsEncode, WritesOpenAisListWithTheCallersModelAndTheUsage) {
  auto d = decode(R"({"model":"my-alias","input":["a","b"]})");
  bool clamped = false;
  auto body = kIngress.encode_response_for(d->request, two_vectors(), clamped);
  ASSERT_TRUE(body) << body.error().message();
  EXPECT_EQ(json::parse(*body), json::parse(R"({"object":"list","data":[
      {"object":"embedding","index":0,"embedding":[0.1208660751581192,-0.5]},
      {"object":"embedding","index":1,"embedding":[0.25,1e-7]}],
      "model":"my-alias","usage":{"prompt_tokens":9,"total_tokens":9}})"));
  EXPECT_NE(body->find("0.1208660751581192"), std::string::npos)
      << "the upstream's digits survive: " << *body;
}

TEST(EmbeddingsEncode, Base64IsLittleEndianFloat32AsTheSdksDecodeIt) {
  auto d = decode(R"({"model":"m","input":["a","b"],"encoding_format":"base64"})");
  ASSERT_TRUE(kIngress.to_ir(d->request));  // as the pipeline does before any answer
  bool clamped = false;
  auto body = kIngress.encode_response_for(d->request, two_vectors(), clamped);
  ASSERT_TRUE(body) << body.error().message();
  const json::value doc = json::parse(*body);
  const ir::Response want = two_vectors();
  for (std::size_t i = 0; i < 2; ++i) {
    const json::value& e = doc.at("data").at(i).at("embedding");
    ASSERT_TRUE(e.is_string());
    auto bytes =
        codec::decode_base64(std::string_view(e.get_string().data(), e.get_string().size()));
    ASSERT_TRUE(bytes);
    ASSERT_EQ(bytes->size(), 8u);
    for (std::size_t k = 0; k < 2; ++k) {
      const auto* p = reinterpret_cast<const unsigned char*>(bytes->data() + k * 4);
      const std::uint32_t bits =
          p[0] | (p[1] << 8) | (p[2] << 16) | (static_cast<std::uint32_t>(p[3]) << 24);
      EXPECT_EQ(std::bit_cast<float>(bits), static_cast<float>(want.embeddings[i][k]));
    }
  }
}

}  // namespace
}  // namespace sluice::protocol::openai_chat
