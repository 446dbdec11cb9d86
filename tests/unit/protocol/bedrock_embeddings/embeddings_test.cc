#include <string>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <gtest/gtest.h>

#include "../../support/fixtures.h"
#include "protocol/bedrock_embeddings/upstream.h"

namespace sluice::protocol::bedrock_embeddings {
namespace {
namespace json = boost::json;

const EmbeddingsUpstream kCodec;

EncodeTarget to(std::string_view model) { return {.model = model, .stream = false, .options = {}}; }

ir::Request embed(std::vector<std::string> inputs, std::optional<std::uint32_t> dimensions = {},
                  std::string input_type = {}) {
  ir::Request r;
  r.embed.inputs = std::move(inputs);
  r.embed.dimensions = dimensions;
  r.embed.input_type = std::move(input_type);
  return r;
}

json::value encoded(const ir::Request& request, std::string_view model) {
  auto body = kCodec.encode_request(request, to(model));
  EXPECT_TRUE(body) << body.error().message();
  return body ? json::parse(*body) : json::value();
}

TEST(BedrockEmbeddingsFamily, IsReadWhereverTheModelIdSitsInTheId) {
  EXPECT_EQ(family_of("amazon.titan-embed-text-v2:0"), Family::kTitanTextV2);
  EXPECT_EQ(family_of("amazon.titan-embed-text-v1"), Family::kTitanTextV1);
  EXPECT_EQ(family_of("amazon.titan-embed-g1-text-02"), Family::kTitanTextV1);
  EXPECT_EQ(family_of("amazon.titan-embed-image-v1"), Family::kTitanMultimodal);
  EXPECT_EQ(family_of("cohere.embed-english-v3"), Family::kCohereV3);
  EXPECT_EQ(family_of("cohere.embed-multilingual-v3"), Family::kCohereV3);
  EXPECT_EQ(family_of("us.cohere.embed-v4:0"), Family::kCohereV4);
  EXPECT_EQ(family_of("arn:aws:bedrock:us-east-1::foundation-model/amazon.titan-embed-text-v2:0"),
            Family::kTitanTextV2);
  EXPECT_EQ(family_of("anthropic.claude-3-5-sonnet-20240620-v1:0"), Family::kUnknown);
}

TEST(BedrockEmbeddingsEncode, TitanV2TakesOneTextItsDimensionsAndUnitLength) {
  EXPECT_EQ(encoded(embed({"hello"}, 256), "amazon.titan-embed-text-v2:0"),
            json::parse(R"({"inputText":"hello","dimensions":256,"normalize":true})"));
  EXPECT_EQ(encoded(embed({"hello"}), "amazon.titan-embed-text-v2:0"),
            json::parse(R"({"inputText":"hello","normalize":true})"));
}

TEST(BedrockEmbeddingsEncode, TitanRefusesSeveralInputsRatherThanCallingSeveralTimes) {
  auto body = kCodec.encode_request(embed({"a", "b", "c"}), to("amazon.titan-embed-text-v2:0"));
  ASSERT_FALSE(body);
  EXPECT_EQ(body.error().kind(), ErrorKind::kBadRequest);
  EXPECT_EQ(body.error().code(), "too_many_inputs");
  EXPECT_EQ(body.error().param(), "input");
  EXPECT_NE(body.error().message().find("has 3"), std::string::npos) << body.error().message();
}

TEST(BedrockEmbeddingsEncode, DimensionsWhereTheModelHasNoChoiceAreTheCallersError) {
  for (std::string_view model : {"amazon.titan-embed-text-v1", "cohere.embed-english-v3"}) {
    auto body = kCodec.encode_request(embed({"a"}, 256), to(model));
    ASSERT_FALSE(body) << model;
    EXPECT_EQ(body.error().kind(), ErrorKind::kBadRequest);
    EXPECT_EQ(body.error().param(), "dimensions");
  }
  EXPECT_EQ(encoded(embed({"a"}, 384), "amazon.titan-embed-image-v1"),
            json::parse(R"({"inputText":"a","embeddingConfig":{"outputEmbeddingLength":384}})"));
}

TEST(BedrockEmbeddingsEncode, CohereTakesTheBatchAndAnInputType) {
  EXPECT_EQ(encoded(embed({"a", "b"}), "cohere.embed-english-v3"),
            json::parse(R"({"texts":["a","b"],"input_type":"search_document"})"));
  EXPECT_EQ(encoded(embed({"q"}, 512, "search_query"), "us.cohere.embed-v4:0"),
            json::parse(R"({"texts":["q"],"input_type":"search_query","output_dimension":512})"));
  auto too_many = kCodec.encode_request(embed(std::vector<std::string>(97, "x")),
                                        to("cohere.embed-english-v3"));
  ASSERT_FALSE(too_many);
  EXPECT_EQ(too_many.error().code(), "too_many_inputs");
}

TEST(BedrockEmbeddingsEncode, AModelOfNoKnownFamilyIsRefused) {
  auto body = kCodec.encode_request(embed({"a"}), to("meta.llama3-8b-instruct-v1:0"));
  ASSERT_FALSE(body);
  EXPECT_EQ(body.error().kind(), ErrorKind::kBadRequest);
  EXPECT_EQ(body.error().param(), "model");
}

TEST(BedrockEmbeddingsDecode, ReadsTheRecordedTitanAnswer) {
  const std::string body = test::read_fixture("bedrock", "invoke-titan-embed-v2-256.json");
  auto r = kCodec.decode_response(body);
  ASSERT_TRUE(r) << r.error().message();
  ASSERT_EQ(r->embeddings.size(), 1u);
  ASSERT_EQ(r->embeddings[0].size(), 256u);
  const json::value doc = json::parse(body);
  EXPECT_EQ(r->embeddings[0][0], doc.at("embedding").at(0).as_double());
  EXPECT_EQ(r->embeddings[0][255], doc.at("embedding").at(255).as_double());
  ASSERT_TRUE(r->usage);
  EXPECT_EQ(*r->usage, (ir::Usage{.input_tokens = 4}));
  EXPECT_TRUE(r->content.empty());
}

TEST(BedrockEmbeddingsDecode, ReadsCohereAnswersOfEitherShapeWithoutUsage) {
  auto floats = kCodec.decode_response(
      R"({"embeddings":[[0.5,-0.25],[1,0]],"id":"e1","response_type":"embeddings_floats","texts":["a","b"]})");
  ASSERT_TRUE(floats) << floats.error().message();
  ASSERT_EQ(floats->embeddings.size(), 2u);
  EXPECT_EQ(floats->embeddings[0], (std::vector<double>{0.5, -0.25}));
  EXPECT_EQ(floats->embeddings[1], (std::vector<double>{1, 0}));
  EXPECT_FALSE(floats->usage) << "Bedrock states Cohere's count in a header only";
  auto by_type = kCodec.decode_response(
      R"({"embeddings":{"float":[[0.125]]},"id":"e2","response_type":"embeddings_by_type"})");
  ASSERT_TRUE(by_type) << by_type.error().message();
  EXPECT_EQ(by_type->embeddings, (std::vector<std::vector<double>>{{0.125}}));
}

TEST(BedrockEmbeddingsDecode, AnythingElseIsTheUpstreamsProtocolError) {
  for (std::string_view body : {R"({"message":"x"})", R"({"embedding":"x"})",
                                R"({"embedding":[1,"2"]})", R"({"embeddings":[[1],[null]]})",
                                R"({"embedding":[1],"inputTextTokenCount":-1})", "[]", "{"}) {
    auto r = kCodec.decode_response(body);
    ASSERT_FALSE(r) << body;
    EXPECT_EQ(r.error().kind(), ErrorKind::kUpstreamProtocol) << body;
  }
}

}  // namespace
}  // namespace sluice::protocol::bedrock_embeddings
