// Sealed reasoning state (pipeline/reasoning_seal.h): what a caller holds cannot be read,
// altered or forged, names the kind of upstream that signed it, and reaches no other kind.

#include "pipeline/reasoning_seal.h"

#include <string>

#include <gtest/gtest.h>

#include "codec/base64.h"

namespace sluice::pipeline {
namespace {

constexpr std::string_view kSecret = "a-fleet-wide-seal-key-of-32-chars!!";
constexpr std::string_view kClaude = "anthropic_messages";
constexpr std::string_view kGemini = "gemini";

ir::ContentPart reasoning(std::string text, std::string signature) {
  ir::ContentPart p;
  p.kind = ir::PartKind::kReasoning;
  p.text = std::move(text);
  p.signature = std::move(signature);
  return p;
}

ir::ContentPart redacted(std::string data) {
  ir::ContentPart p;
  p.kind = ir::PartKind::kRedactedReasoning;
  p.signature = std::move(data);
  return p;
}

ir::Request conversation(std::vector<ir::ContentPart> assistant) {
  ir::Request r;
  r.messages.push_back(
      {.role = ir::Role::kUser, .content = {ir::ContentPart::make_text("hi")}, .name = {}});
  assistant.push_back(ir::ContentPart::make_text("answer"));
  r.messages.push_back({.role = ir::Role::kAssistant, .content = std::move(assistant), .name = {}});
  return r;
}

TEST(ReasoningSealTest, OpensWhatItSealedWithTheOriginAndHidesTheSignature) {
  const ReasoningSeal seal(kSecret);
  const std::string sealed = seal.seal(kClaude, "EqQBCkYIARgCIkB-signature");
  EXPECT_TRUE(sealed.starts_with("sluice:r1:"));
  EXPECT_EQ(sealed.find("signature"), std::string::npos);
  const auto opened = seal.open(sealed);
  ASSERT_TRUE(opened);
  EXPECT_EQ(opened->origin, kClaude);
  EXPECT_EQ(opened->signature, "EqQBCkYIARgCIkB-signature");
  // A fresh nonce each time: the same signature never seals to the same value twice.
  EXPECT_NE(seal.seal(kClaude, "EqQBCkYIARgCIkB-signature"), sealed);
}

TEST(ReasoningSealTest, AnyAlteredByteOrAnotherKeyDoesNotOpen) {
  const ReasoningSeal seal(kSecret);
  const std::string sealed = seal.seal(kClaude, "sig");
  for (std::size_t i = ReasoningSeal::kPrefix.size(); i < sealed.size(); ++i) {
    std::string altered = sealed;
    altered[i] = altered[i] == 'A' ? 'B' : 'A';
    EXPECT_FALSE(seal.open(altered)) << "byte " << i;
  }
  EXPECT_FALSE(ReasoningSeal("another-fleet-key-also-32-chars-long").open(sealed));
  EXPECT_FALSE(seal.open(sealed.substr(0, sealed.size() - 4)));
  EXPECT_FALSE(seal.open("sluice:r1:"));
  EXPECT_FALSE(seal.open("sluice:r1:!!not-base64!!"));
  EXPECT_FALSE(seal.open("gAAAAABo-openai-encrypted-content"));
}

TEST(ReasoningSealTest, AForgedOriginCannotBeWrittenWithoutTheKey) {
  // A caller who knows the format but not the key: plaintext of its choosing, any nonce, any tag.
  const ReasoningSeal seal(kSecret);
  std::string forged(12 + 1 + kClaude.size() + 3 + 16, 'x');
  forged[12] = static_cast<char>(kClaude.size());
  const std::string value =
      "sluice:r1:" + codec::base64(forged, codec::Base64Alphabet::kUrlUnpadded);
  EXPECT_FALSE(seal.open(value));
}

TEST(ReasoningSealTest, TheProcessKeyIsStableAcrossReloadsOfTheSameConfig) {
  const std::string sealed = ReasoningSeal("").seal(kGemini, "thought");
  const auto opened = ReasoningSeal("").open(sealed);
  ASSERT_TRUE(opened);
  EXPECT_EQ(opened->signature, "thought");
  EXPECT_FALSE(ReasoningSeal(kSecret).open(sealed));
}

TEST(ReasoningSealTest, OpenRestoresSealedSignaturesAndDropsEverythingElse) {
  const ReasoningSeal seal(kSecret);
  std::string forged = seal.seal(kClaude, "sig-2");
  forged.back() = forged.back() == 'A' ? 'B' : 'A';
  ir::Request r = conversation({
      reasoning("thinking", seal.seal(kClaude, "sig-1")),
      reasoning("", forged),                          // nothing left once dropped: removed
      reasoning("summary kept", "gAAAA-openai-own"),  // unsealed: the text stays, unsigned
      redacted(seal.seal(kClaude, "redacted-data")),
      redacted("raw-redacted"),  // unsealed redacted data: removed
  });
  EXPECT_EQ(open_reasoning(r, seal, /*only_sealed=*/true), 3u);
  const auto& parts = r.messages[1].content;
  ASSERT_EQ(parts.size(), 4u);
  EXPECT_EQ(parts[0].signature, "sig-1");
  EXPECT_EQ(parts[0].name, kClaude);
  EXPECT_EQ(parts[1].text, "summary kept");
  EXPECT_EQ(parts[1].signature, "");
  EXPECT_EQ(parts[1].name, "");
  EXPECT_EQ(parts[2].kind, ir::PartKind::kRedactedReasoning);
  EXPECT_EQ(parts[2].signature, "redacted-data");
  EXPECT_EQ(parts[3].text, "answer");
}

TEST(ReasoningSealTest, UnsealedSignaturesStayWhenTheProtocolDoesNotSeal) {
  const ReasoningSeal seal(kSecret);
  ir::Request r = conversation({reasoning("thinking", "raw-claude-signature")});
  EXPECT_EQ(open_reasoning(r, seal, /*only_sealed=*/false), 0u);
  EXPECT_EQ(r.messages[1].content[0].signature, "raw-claude-signature");
}

TEST(ReasoningSealTest, ReasoningOfAnotherKindOfUpstreamIsLeftOutForIt) {
  const ReasoningSeal seal(kSecret);
  ir::Request r = conversation({
      reasoning("claude thinking", seal.seal(kClaude, "claude-sig")),
      redacted(seal.seal(kClaude, "claude-redacted")),
      reasoning("", seal.seal(kGemini, "gemini-thought")),
      reasoning("unknown origin", seal.seal("", "any")),
  });
  open_reasoning(r, seal, true);
  EXPECT_FALSE(has_foreign_reasoning(conversation({reasoning("t", "raw")}), kGemini));

  ASSERT_TRUE(has_foreign_reasoning(r, kClaude));
  const ir::Request for_claude = without_foreign_reasoning(r, kClaude);
  ASSERT_EQ(for_claude.messages[1].content.size(), 4u);  // the Gemini thought went
  EXPECT_EQ(for_claude.messages[1].content[0].signature, "claude-sig");
  EXPECT_EQ(for_claude.messages[1].content[1].signature, "claude-redacted");
  EXPECT_EQ(for_claude.messages[1].content[2].signature, "any");
  EXPECT_FALSE(has_foreign_reasoning(for_claude, kClaude));

  const ir::Request for_gemini = without_foreign_reasoning(r, kGemini);
  ASSERT_EQ(for_gemini.messages[1].content.size(), 4u);
  // Claude's thinking text stays, without the signature Gemini cannot check; the redacted
  // block has nothing else and goes.
  EXPECT_EQ(for_gemini.messages[1].content[0].text, "claude thinking");
  EXPECT_EQ(for_gemini.messages[1].content[0].signature, "");
  EXPECT_EQ(for_gemini.messages[1].content[1].signature, "gemini-thought");
  EXPECT_EQ(for_gemini.messages[1].content[2].text, "unknown origin");
  EXPECT_EQ(for_gemini.messages[1].content[3].text, "answer");
  // The shared request is untouched: the next attempt may go to a Claude upstream.
  EXPECT_EQ(r.messages[1].content.size(), 5u);
}

TEST(ReasoningSealTest, AnswersAreSealedOnceWithTheirOrigin) {
  const ReasoningSeal seal(kSecret);
  ir::Response answer;
  answer.content = {reasoning("t", "sig"), redacted("data"), ir::ContentPart::make_text("x")};
  seal_reasoning(answer, seal, kGemini);
  const std::string first = answer.content[0].signature;
  ASSERT_TRUE(ReasoningSeal::is_sealed(first));
  EXPECT_EQ(seal.open(answer.content[1].signature)->signature, "data");
  EXPECT_EQ(answer.content[2].signature, "");
  seal_reasoning(answer, seal, kGemini);  // a cached answer replayed: not sealed twice
  EXPECT_EQ(answer.content[0].signature, first);
  EXPECT_EQ(seal.open(first)->origin, kGemini);

  ir::StreamEvent ev;
  ev.kind = ir::StreamEventKind::kReasoningSignature;
  ev.text = "stream-sig";
  seal_reasoning(ev, seal, kClaude);
  EXPECT_EQ(seal.open(ev.text)->signature, "stream-sig");
  ir::StreamEvent text;
  text.text = "plain";
  seal_reasoning(text, seal, kClaude);
  EXPECT_EQ(text.text, "plain");
}

}  // namespace
}  // namespace sluice::pipeline
