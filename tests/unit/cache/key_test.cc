#include "cache/key.h"

#include <gtest/gtest.h>

#include "cache/key_aliases.h"

namespace sluice::cache {
namespace {

ir::Request question(std::string text) {
  ir::Request r;
  r.model = "gpt-4o-mini";
  ir::Message m;
  m.role = ir::Role::kUser;
  m.content.push_back(ir::ContentPart::make_text(std::move(text)));
  r.messages.push_back(std::move(m));
  return r;
}

const KeyScope kScope{"chat|openai/gpt-4o-mini", "g:team-a", {}};

TEST(CacheKeyTest, WhatDoesNotChangeTheAnswerDoesNotChangeTheKey) {
  const Key base = answer_key(question("hello"), kScope);
  ir::Request other = question("hello");
  other.model = "another-alias-of-the-route";
  other.stream = true;
  other.user = "end-user-42";
  other.messages[0].content[0].cache_breakpoint = true;
  EXPECT_EQ(answer_key(other, kScope), base);
}

TEST(CacheKeyTest, EveryFieldThatChangesTheAnswerChangesTheKey) {
  const Key base = answer_key(question("hello"), kScope);
  std::vector<ir::Request> variants;
  variants.push_back(question("hello!"));
  variants.emplace_back(question("hello")).temperature = 0.2;
  variants.emplace_back(question("hello")).top_p = 0.5;
  variants.emplace_back(question("hello")).top_k = 5;
  variants.emplace_back(question("hello")).max_tokens = 16;
  variants.emplace_back(question("hello")).stop = {"\n"};
  variants.emplace_back(question("hello")).system = {ir::ContentPart::make_text("be terse")};
  variants.emplace_back(question("hello")).messages[0].role = ir::Role::kAssistant;
  variants.emplace_back(question("hello")).tools.push_back({"lookup", "", "{}", false});
  variants.emplace_back(question("hello")).tool_choice.mode = ir::ToolChoiceMode::kRequired;
  variants.emplace_back(question("hello")).reasoning.effort = "high";
  variants.emplace_back(question("hello")).response_format.kind =
      ir::ResponseFormat::Kind::kJsonObject;
  variants.emplace_back(question("hello")).provider_options = R"({"openai":{"seed":1}})";
  for (std::size_t i = 0; i < variants.size(); ++i) {
    EXPECT_NE(answer_key(variants[i], kScope), base) << "variant " << i;
  }
}

TEST(CacheKeyTest, TenantsRoutesAndVaryHeadersAreApart) {
  const ir::Request q = question("hello");
  const Key base = answer_key(q, kScope);
  EXPECT_NE(answer_key(q, {kScope.route, "g:team-b", {}}), base);
  EXPECT_NE(answer_key(q, {kScope.route, "*", {}}), base);
  EXPECT_NE(answer_key(q, {"chat|anthropic/claude", kScope.tenant, {}}), base);
  const std::pair<std::string_view, std::string_view> fr[] = {{"accept-language", "fr"}};
  const std::pair<std::string_view, std::string_view> de[] = {{"accept-language", "de"}};
  EXPECT_NE(answer_key(q, {kScope.route, kScope.tenant, fr}), base);
  EXPECT_NE(answer_key(q, {kScope.route, kScope.tenant, fr}),
            answer_key(q, {kScope.route, kScope.tenant, de}));
}

// Length prefixes keep field boundaries: moving text between neighbours is another request.
TEST(CacheKeyTest, FieldBoundariesCannotBeShifted) {
  ir::Request a = question("ab");
  a.messages.push_back(a.messages[0]);
  a.messages[1].content[0].text = "c";
  ir::Request b = question("a");
  b.messages.push_back(b.messages[0]);
  b.messages[1].content[0].text = "bc";
  EXPECT_NE(answer_key(a, kScope), answer_key(b, kScope));
  // A tenant name that swallows the route's separator is still another scope.
  EXPECT_NE(answer_key(question("x"), {"r|a", "b", {}}),
            answer_key(question("x"), {"r", "a|b", {}}));
}

// Keys are shared through Redis between instances of different builds: the canonical form,
// hashed as it is written, must not change (values from the form hashed in one piece).
TEST(CacheKeyTest, KeysAreStableAcrossBuilds) {
  EXPECT_EQ(to_hex(answer_key(question("hello"), kScope)),
            "0f6a5c3d9c7dbef88c11d1e228c7832adb89767b521e8a4d81bf8aa0ab4aefe8");
  ir::Request long_prompt = question(std::string(300'000, 'x'));
  long_prompt.system = {ir::ContentPart::make_text(std::string(5000, 's'))};
  long_prompt.temperature = 0.5;
  EXPECT_EQ(to_hex(answer_key(long_prompt, kScope)),
            "a712996648f8177e262150f5894597c704a3f65190a9d4e9f41446d2a15c8d4d");
}

TEST(CacheKeyTest, BodyAliasesAreApartByEverythingThatDecidesTheKey) {
  const std::string_view body = R"({"model":"m","messages":[{"role":"user","content":"hi"}]})";
  const Key base = body_alias(kScope, "openai", "/v1/chat/completions", body);
  EXPECT_EQ(body_alias(kScope, "openai", "/v1/chat/completions", body), base);
  EXPECT_NE(body_alias(kScope, "openai", "/v1/chat/completions",
                       R"({"model":"m","messages":[{"role":"user","content":"ho"}]})"),
            base);
  EXPECT_NE(body_alias(kScope, "openai_responses", "/v1/chat/completions", body), base);
  EXPECT_NE(body_alias(kScope, "openai", "/v1/responses", body), base);
  EXPECT_NE(body_alias({kScope.route, "g:team-b", {}}, "openai", "/v1/chat/completions", body),
            base);
  EXPECT_NE(body_alias({"chat|anthropic/claude", kScope.tenant, {}}, "openai",
                       "/v1/chat/completions", body),
            base);
  const std::pair<std::string_view, std::string_view> fr[] = {{"accept-language", "fr"}};
  EXPECT_NE(body_alias({kScope.route, kScope.tenant, fr}, "openai", "/v1/chat/completions", body),
            base);
  // Never an answer key of any request: the two forms are tagged apart.
  EXPECT_NE(base, answer_key(question("hi"), kScope));
}

TEST(KeyAliasesTest, RemembersAndForgetsTheOldestWhenFull) {
  KeyAliases aliases(16);  // one per shard
  auto key_of = [](std::uint8_t n, std::uint8_t shard) {
    Key k{};
    k[0] = n;
    k[31] = shard;
    return k;
  };
  const Key first = key_of(1, 0), second = key_of(2, 16), target = key_of(9, 9);
  EXPECT_FALSE(aliases.find(first));
  aliases.remember(first, target);
  ASSERT_TRUE(aliases.find(first));
  EXPECT_EQ(*aliases.find(first), target);
  aliases.remember(second, target);  // the same shard (16 % 16): the first goes
  EXPECT_FALSE(aliases.find(first));
  EXPECT_TRUE(aliases.find(second));
  aliases.remember(key_of(3, 1), target);  // another shard: the second stays
  EXPECT_TRUE(aliases.find(second));
  aliases.remember(second, first);  // known: updated in place, nothing forgotten
  EXPECT_EQ(*aliases.find(second), first);
  EXPECT_TRUE(aliases.find(key_of(3, 1)));
}

TEST(CacheKeyTest, HexIsSixtyFourDigits) {
  const std::string hex = to_hex(answer_key(question("hello"), kScope));
  EXPECT_EQ(hex.size(), 64u);
  EXPECT_EQ(hex.find_first_not_of("0123456789abcdef"), std::string::npos);
}

}  // namespace
}  // namespace sluice::cache
