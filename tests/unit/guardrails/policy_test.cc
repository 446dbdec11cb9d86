#include "guardrails/policy.h"

#include <string>

#include <gtest/gtest.h>

#include "guardrails/body.h"
#include "guardrails/json_strings.h"

// Policies over whole request bodies: what is redacted, how placeholders are numbered, what a
// block reports, what is never touched (names, ids, images), and that the JSON stays valid with
// every other byte as the caller sent it.
namespace sluice::guardrails {
namespace {

using config::GuardrailAction;

config::GuardrailDetector builtin(std::string name, GuardrailAction action) {
  config::GuardrailDetector d;
  d.name = std::move(name);
  d.action = action;
  d.source = "test.yaml:1";
  return d;
}

Policies policies(std::vector<config::GuardrailDetector> detectors,
                  GuardrailAction uninspected = GuardrailAction::kFlag) {
  config::GuardrailPolicy p;
  p.name = "pii";
  p.detectors = std::move(detectors);
  p.uninspected = uninspected;
  auto compiled = Policy::compile(p);
  EXPECT_TRUE(compiled) << (compiled ? "" : compiled.error().message());
  return Policies{*compiled};
}

TEST(Policy, RedactsWithNumberedPlaceholdersAcrossTheRequest) {
  const Policies ps = policies({builtin("pii", GuardrailAction::kRedact)});
  Inspector inspector(ps);
  const std::string body =
      R"({"model":"gpt-4o","messages":[{"role":"system","content":"Agent is ann@corp.example"},)"
      R"({"role":"user","content":"I am bob@mail.example, cc ann@corp.example, card 4111 1111 1111 1111"}]})";
  const std::optional<std::string> out = inspect_body(body, inspector);
  ASSERT_TRUE(out);
  EXPECT_EQ(*out,
            R"({"model":"gpt-4o","messages":[{"role":"system","content":"Agent is [EMAIL_1]"},)"
            R"({"role":"user","content":"I am [EMAIL_2], cc [EMAIL_1], card [CARD_1]"}]})");
  EXPECT_EQ(inspector.verdict().summary(), "pii/email:redact=3,pii/payment_card:redact=1");
  EXPECT_FALSE(inspector.blocked());
}

TEST(Policy, ToolArgumentsAndResultsAreText_NamesAndIdsAreNot) {
  const Policies ps = policies({builtin("email", GuardrailAction::kRedact)});
  Inspector inspector(ps);
  // OpenAI tool-call arguments are a JSON string inside the JSON: redacted inside, still valid.
  const std::string body =
      R"({"messages":[{"role":"assistant","tool_calls":[{"id":"call_a@b.co","type":"function",)"
      R"("function":{"name":"mail@x.io","arguments":"{\"to\":\"eve@evil.example\"}"}}]},)"
      R"({"role":"tool","tool_call_id":"call_a@b.co","content":"sent to eve@evil.example"}]})";
  const std::optional<std::string> out = inspect_body(body, inspector);
  ASSERT_TRUE(out);
  EXPECT_EQ(
      *out,
      R"({"messages":[{"role":"assistant","tool_calls":[{"id":"call_a@b.co","type":"function",)"
      R"("function":{"name":"mail@x.io","arguments":"{\"to\":\"[EMAIL_1]\"}"}}]},)"
      R"({"role":"tool","tool_call_id":"call_a@b.co","content":"sent to [EMAIL_1]"}]})");
}

TEST(Policy, ABlockNamesPolicyAndDetectorAndStops) {
  const Policies ps = policies(
      {builtin("email", GuardrailAction::kRedact), builtin("secrets", GuardrailAction::kBlock)});
  Inspector inspector(ps);
  const std::string body =
      R"({"messages":[{"role":"user","content":"my key is sk-proj-abcdefghijklmnopqrstuvwx"},)"
      R"({"role":"user","content":"and a@b.example"}]})";
  EXPECT_EQ(inspect_body(body, inspector), std::nullopt);
  ASSERT_TRUE(inspector.blocked());
  EXPECT_EQ(inspector.verdict().block()->detector, "openai_key");
  EXPECT_EQ(inspector.verdict().summary(), "pii/openai_key:block=1") << "nothing after a block";
}

TEST(Policy, OverlapsTakeTheMostSevereAction) {
  std::string error;
  config::GuardrailDetector words;
  words.kind = config::GuardrailDetector::Kind::kKeywords;
  words.name = "internal";
  words.words = {"corp.example"};
  words.action = GuardrailAction::kBlock;
  const Policies ps = policies({builtin("email", GuardrailAction::kRedact), words});
  Inspector inspector(ps);
  EXPECT_EQ(inspector.inspect("mail ann@corp.example now"), std::nullopt);
  EXPECT_TRUE(inspector.blocked());
}

TEST(Policy, FlagsLeaveTheTextAsItIs) {
  const Policies ps = policies({builtin("ipv4", GuardrailAction::kFlag)});
  Inspector inspector(ps);
  EXPECT_EQ(inspect_body(R"({"input":["ping 10.1.2.3","and 10.1.2.4"]})", inspector), std::nullopt);
  EXPECT_EQ(inspector.verdict().summary(), "pii/ipv4:flag=2");
}

TEST(Policy, ImagesAreUninspected_FlaggedOrBlocked) {
  const std::string body =
      R"({"messages":[{"role":"user","content":[{"type":"text","text":"what is this?"},)"
      R"({"type":"image_url","image_url":{"url":"data:image/png;base64,NDExMSAxMTExIDExMTEgMTExMQ=="}}]}]})";
  {
    const Policies ps = policies({builtin("pii", GuardrailAction::kBlock)});
    Inspector inspector(ps);
    EXPECT_EQ(inspect_body(body, inspector), std::nullopt);
    EXPECT_FALSE(inspector.blocked());
    EXPECT_EQ(inspector.verdict().uninspected, 1u);
    EXPECT_EQ(inspector.verdict().summary(), "pii/uninspected:flag=1");
  }
  {
    const Policies ps =
        policies({builtin("pii", GuardrailAction::kBlock)}, GuardrailAction::kBlock);
    Inspector inspector(ps);
    inspect_body(body, inspector);
    EXPECT_TRUE(inspector.blocked());
    EXPECT_EQ(inspector.verdict().block()->detector, "uninspected");
  }
}

TEST(Policy, EscapedTextIsReadUnescaped_AndWrittenBackEscaped) {
  const Policies ps = policies({builtin("email", GuardrailAction::kRedact)});
  Inspector inspector(ps);
  const std::optional<std::string> out =
      inspect_body(R"({"system":"\"Quote\"\nmail: ann\u0040corp.example\t\u00e9"})", inspector);
  ASSERT_TRUE(out);
  EXPECT_EQ(*out, "{\"system\":\"\\\"Quote\\\"\\nmail: [EMAIL_1]\\t\xc3\xa9\"}");
}

TEST(Policy, UnknownBuiltinOrBadPatternIsAConfigError) {
  config::GuardrailPolicy p;
  p.name = "x";
  p.detectors = {builtin("emails", GuardrailAction::kBlock)};
  auto compiled = Policy::compile(p);
  ASSERT_FALSE(compiled);
  EXPECT_NE(compiled.error().message().find("test.yaml:1"), std::string::npos);
  EXPECT_NE(compiled.error().message().find("unknown built-in detector \"emails\""),
            std::string::npos);
  config::GuardrailDetector re;
  re.kind = config::GuardrailDetector::Kind::kRegex;
  re.name = "broken";
  re.pattern = "([a-z]";
  p.detectors = {re};
  EXPECT_FALSE(Policy::compile(p));
}

TEST(JsonStrings, KeysAndNonStringsAreLeftAlone) {
  std::vector<std::pair<std::string, std::string>> seen;
  const auto out = rewrite_strings(R"({"a":"x","b":[1,"y",{"c":"z"}],"d":true,"e\"k":"w"})",
                                   [&](const JsonString& s) -> std::optional<std::string> {
                                     seen.emplace_back(s.key, s.text);
                                     return std::nullopt;
                                   });
  EXPECT_EQ(out, std::nullopt);
  EXPECT_EQ(seen, (std::vector<std::pair<std::string, std::string>>{
                      {"a", "x"}, {"b", "y"}, {"c", "z"}, {"e\\\"k", "w"}}));
}

}  // namespace
}  // namespace sluice::guardrails
