#include "pipeline/provider_options.h"

#include <string>

#include <boost/json/parse.hpp>
#include <gtest/gtest.h>

namespace sluice::pipeline {
namespace {
namespace json = boost::json;

ProviderOptions read(std::string_view body) {
  auto bag = ProviderOptions::read(body);
  EXPECT_TRUE(bag) << bag.error().message();
  return bag ? std::move(*bag) : ProviderOptions();
}

Error refused(std::string_view body) {
  auto bag = ProviderOptions::read(body);
  EXPECT_FALSE(bag) << body;
  return bag ? Error(ErrorKind::kInternal, "accepted") : bag.error();
}

TEST(ProviderOptions, AnUpstreamGetsItsOwnFamilysEntriesAndNeverTheBag) {
  const ProviderOptions bag = read(R"({"model":"m","provider_options":{
      "anthropic":{"top_k":5},"gemini":{"safetySettings":[{"category":"X"}]},
      "bedrock":{"guardrailConfig":{"guardrailIdentifier":"g1","guardrailVersion":"1"}}}})");
  std::uint32_t ignored = 0;
  EXPECT_EQ(
      json::parse(bag.apply(R"({"model":"claude","max_tokens":8})", "anthropic_messages", ignored)),
      json::parse(R"({"model":"claude","max_tokens":8,"top_k":5})"));
  EXPECT_EQ(json::parse(bag.apply(R"({"contents":[]})", "gemini", ignored)),
            json::parse(R"({"contents":[],"safetySettings":[{"category":"X"}]})"));
  EXPECT_EQ(json::parse(bag.apply(R"({"messages":[]})", "bedrock_converse", ignored)),
            json::parse(R"({"messages":[],"guardrailConfig":{"guardrailIdentifier":"g1",
                "guardrailVersion":"1"}})"));
  EXPECT_EQ(json::parse(bag.apply(R"({"model":"gpt"})", "openai_chat", ignored)),
            json::parse(R"({"model":"gpt"})"))
      << "no openai entries: the body as it was";
  EXPECT_EQ(ignored, 0u);
}

TEST(ProviderOptions, ObjectsTheCodecAlsoWritesAreMergedKeyByKeyTheCallersWinning) {
  const ProviderOptions bag = read(R"({"provider_options":{
      "gemini":{"generationConfig":{"seed":7,"thinkingConfig":{"thinkingBudget":0}}},
      "bedrock":{"additionalModelRequestFields":{"top_k":40}}}})");
  std::uint32_t ignored = 0;
  EXPECT_EQ(
      json::parse(bag.apply(
          R"({"generationConfig":{"temperature":0.5,"thinkingConfig":{"thinkingBudget":99}}})",
          "gemini", ignored)),
      json::parse(R"({"generationConfig":{"temperature":0.5,"seed":7,
                "thinkingConfig":{"thinkingBudget":0}}})"));
  EXPECT_EQ(
      json::parse(bag.apply(R"({"additionalModelRequestFields":{"thinking":{"type":"enabled"}}})",
                            "bedrock_converse", ignored)),
      json::parse(R"({"additionalModelRequestFields":{"thinking":{"type":"enabled"},
                "top_k":40}})"));
}

TEST(ProviderOptions, APassedThroughBodyLosesTheBagAndGainsItsOwnFamily) {
  const std::string caller =
      R"({"model":"gpt","messages":[],"provider_options":{"openai":{"seed":3},"anthropic":{"top_k":1}}})";
  const ProviderOptions bag = read(caller);
  std::uint32_t ignored = 0;
  EXPECT_EQ(json::parse(bag.apply(caller, "openai_chat", ignored)),
            json::parse(R"({"model":"gpt","messages":[],"seed":3})"));
  const ProviderOptions gemini = read(R"({"contents":[],"providerOptions":{}})");
  EXPECT_TRUE(gemini.empty());
  EXPECT_EQ(json::parse(gemini.apply(R"({"contents":[],"providerOptions":{}})", "gemini", ignored)),
            json::parse(R"({"contents":[]})"));
}

TEST(ProviderOptions, AMemberTheWireLacksIsLeftOutAndCounted) {
  const ProviderOptions bag = read(
      R"({"provider_options":{"openai":{"seed":3,"prompt_cache_key":"k","truncation":"auto"}}})");
  std::uint32_t ignored = 0;
  EXPECT_EQ(json::parse(bag.apply(R"({"input":"hi"})", "openai_responses", ignored)),
            json::parse(R"({"input":"hi","prompt_cache_key":"k","truncation":"auto"})"));
  EXPECT_EQ(ignored, 1u) << "seed: Chat Completions only";
  EXPECT_EQ(json::parse(bag.apply(R"({"messages":[]})", "openai_chat", ignored)),
            json::parse(R"({"messages":[],"seed":3,"prompt_cache_key":"k"})"));
  EXPECT_EQ(ignored, 2u) << "truncation: Responses only";
}

TEST(ProviderOptions, AnythingNotAllowedIsA400NamingIt) {
  const std::pair<std::string_view, std::string_view> cases[] = {
      {R"({"provider_options":[1]})", "provider_options"},
      {R"({"provider_options":{"antropic":{}}})", "provider_options.antropic"},
      {R"({"provider_options":{"anthropic":[]}})", "provider_options.anthropic"},
      {R"({"provider_options":{"openai":{"store":true}}})", "provider_options.openai.store"},
      {R"({"provider_options":{"openai":{"service_tier":"priority"}}})",
       "provider_options.openai.service_tier"},
      {R"({"provider_options":{"gemini":{"cachedContent":"cachedContents/other-tenant"}}})",
       "provider_options.gemini.cachedContent"},
      {R"({"provider_options":{"anthropic":{"container":"c1"}}})",
       "provider_options.anthropic.container"},
      {R"({"provider_options":{"openai":{"seed":"3"}}})", "provider_options.openai.seed"},
      {R"({"provider_options":{"gemini":{"generationConfig":{"candidateCount":2}}}})",
       "provider_options.gemini.generationConfig.candidateCount"},
      {R"({"provider_options":{"anthropic":{"metadata":{"other":1}}}})",
       "provider_options.anthropic.metadata.other"},
  };
  for (const auto& [body, param] : cases) {
    const Error e = refused(body);
    EXPECT_EQ(e.kind(), ErrorKind::kBadRequest) << body;
    EXPECT_EQ(e.param(), param) << body;
    EXPECT_EQ(e.code(), "invalid_provider_options") << body;
  }
}

TEST(ProviderOptions, TheCacheKeysOnTheBagAsSent) {
  EXPECT_EQ(read(R"({"provider_options":{"openai":{"seed":3}}})").text(),
            R"({"openai":{"seed":3}})");
  EXPECT_TRUE(read(R"({"model":"m"})").empty());
  EXPECT_TRUE(read(R"({"provider_options":null})").empty());
}

}  // namespace
}  // namespace sluice::pipeline
