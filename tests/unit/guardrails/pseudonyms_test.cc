#include "guardrails/pseudonyms.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "../support/chat_deltas.h"
#include "guardrails/body.h"
#include "guardrails/policy.h"
#include "guardrails/stream_restore.h"

// Pseudonymisation: the request goes out with placeholders, the caller's answer comes back with
// the values, whole or streamed, wherever the model's deltas cut a placeholder.
namespace sluice::guardrails {
namespace {

using config::GuardrailAction;

Policies pseudonymise_emails() {
  config::GuardrailPolicy p;
  p.name = "pii";
  config::GuardrailDetector email;
  email.name = "email";
  email.action = GuardrailAction::kPseudonymise;
  config::GuardrailDetector card;
  card.name = "payment_card";
  card.action = GuardrailAction::kRedact;
  p.detectors = {email, card};
  return Policies{*Policy::compile(p)};
}

Pseudonyms two_people() {
  Pseudonyms p;
  p.add("[EMAIL_1]", "ann@corp.example");
  p.add("[EMAIL_2]", "bob@mail.example");
  return p;
}

TEST(Pseudonyms, TheInspectorNumbersThemWithRedactionsAndKeepsOnlyThePseudonymised) {
  const Policies ps = pseudonymise_emails();
  Inspector inspector(ps);
  const std::string body =
      R"({"messages":[{"role":"user","content":"I am ann@corp.example, card 4111 1111 1111 1111; )"
      R"(write to bob@mail.example and ann@corp.example"}]})";
  const std::optional<std::string> out = inspect_body(body, inspector);
  ASSERT_TRUE(out);
  EXPECT_EQ(*out, R"({"messages":[{"role":"user","content":"I am [EMAIL_1], card [CARD_1]; )"
                  R"(write to [EMAIL_2] and [EMAIL_1]"}]})");
  EXPECT_EQ(inspector.verdict().summary(), "pii/email:pseudonymise=3,pii/payment_card:redact=1");
  const Pseudonyms table = inspector.take_pseudonyms();
  EXPECT_EQ(table.size(), 2u) << "the redacted card never comes back";
  EXPECT_EQ(table.restore("[CARD_1] for [EMAIL_2]", false), "[CARD_1] for bob@mail.example");
}

TEST(Pseudonyms, RestoreEscapesAValueInsideJsonText) {
  Pseudonyms p;
  p.add("[NAME_1]", R"(O"Hara \ Co)");
  EXPECT_EQ(p.restore("to [NAME_1].", false), R"(to O"Hara \ Co.)");
  EXPECT_EQ(p.restore(R"({"to":"[NAME_1]"})", true), R"({"to":"O\"Hara \\ Co"})");
  EXPECT_EQ(p.restore("no [placeholder] here", false), std::nullopt);
}

TEST(Pseudonyms, PartialTailIsTheUnfinishedBeginningOfAPlaceholder) {
  const Pseudonyms p = two_people();
  EXPECT_EQ(p.partial_tail("write to [EMA"), 4u);
  EXPECT_EQ(p.partial_tail("write to ["), 1u);
  EXPECT_EQ(p.partial_tail("write to [EMAIL_2"), 8u);
  EXPECT_EQ(p.partial_tail("write to [EMAIL_2]"), 0u) << "complete";
  EXPECT_EQ(p.partial_tail("write to [EMX"), 0u) << "no placeholder begins so";
  EXPECT_EQ(p.partial_tail("a [b] [EM"), 3u);
}

TEST(Pseudonyms, AnAnswerBodyIsRestoredInTextAndToolArgumentsButNotInIds) {
  const Pseudonyms p = two_people();
  const std::string body =
      R"({"id":"[EMAIL_1]","choices":[{"message":{"content":"Mailed [EMAIL_1].","tool_calls":)"
      R"([{"id":"c","function":{"name":"send","arguments":"{\"to\":\"[EMAIL_2]\"}"}}]}}]})";
  EXPECT_EQ(restore_body(body, p),
            R"({"id":"[EMAIL_1]","choices":[{"message":{"content":"Mailed ann@corp.example.",)"
            R"("tool_calls":[{"id":"c","function":{"name":"send","arguments":)"
            R"("{\"to\":\"bob@mail.example\"}"}}]}}]})");
}

using testing::chat_delta;
using testing::content_of;

TEST(StreamRestorer, APlaceholderCutAtEveryByteIsRestoredWhole) {
  const Pseudonyms p = two_people();
  const std::string answer = "Hi [EMAIL_1], meet [EMAIL_2] ([EMAIL_1] is [me]) [EMA";
  const std::string expected =
      "Hi ann@corp.example, meet bob@mail.example (ann@corp.example is [me]) [EMA";
  for (std::size_t first = 0; first <= answer.size(); ++first) {
    for (std::size_t piece : {std::size_t{1}, std::size_t{3}, std::size_t{64}}) {
      StreamRestorer restorer(p);
      std::string out;
      std::string data = chat_delta(answer.substr(0, first));
      restorer.pass(data, false);
      out += data;
      for (std::size_t at = first; at < answer.size(); at += piece) {
        data = chat_delta(answer.substr(at, piece));
        restorer.pass(data, false);
        out += data;
      }
      data = "data: [DONE]\n\n";
      restorer.pass(data, true);
      out += data;
      ASSERT_EQ(content_of(out), expected) << "cut at " << first << ", pieces of " << piece;
      EXPECT_TRUE(out.ends_with("data: [DONE]\n\n"));
    }
  }
}

TEST(StreamRestorer, AnUnfinishedTailWaitsForTheNextDeltaOfItsMemberOnly) {
  const Pseudonyms p = two_people();
  StreamRestorer restorer(p);
  std::string data = chat_delta("see [EMA");
  restorer.pass(data, false);
  EXPECT_EQ(data, "") << "the event waits for the next delta";
  // The next event is a tool call's arguments: not the same member, the text goes out as it was.
  data =
      R"(data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"IL_1]"}}]}}]})"
      "\n\n";
  restorer.pass(data, false);
  EXPECT_EQ(content_of(data), "see [EMA");
  EXPECT_NE(data.find(R"("arguments":"IL_1]")"), std::string::npos) << data;
}

TEST(StreamRestorer, AnthropicAndResponsesDeltasAndDoneEvents) {
  const Pseudonyms p = two_people();
  StreamRestorer restorer(p);
  std::string data =
      "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,"
      "\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"to\\\": \\\"[EMAIL\"}}\n\n"
      "event: ping\ndata: {\"type\":\"ping\"}\n\n"
      "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,"
      "\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"_2]\\\"}\"}}\n\n";
  restorer.pass(data, false);
  EXPECT_NE(data.find(R"("partial_json":"{\"to\": \"")"), std::string::npos) << data;
  EXPECT_NE(data.find(R"("partial_json":"bob@mail.example\"}")"), std::string::npos) << data;
  EXPECT_LT(data.find("event: content_block_delta"), data.find("event: ping"))
      << "the ping waited behind the event";

  StreamRestorer responses(p);
  data =
      "event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\","
      "\"delta\":\"to [EM\"}\n\n"
      "event: response.output_text.done\ndata: {\"type\":\"response.output_text.done\","
      "\"text\":\"to [EM\"}\n\n";
  responses.pass(data, true);
  EXPECT_NE(data.find(R"("delta":"to [EM")"), std::string::npos)
      << "the done event is not a continuation: " << data;
  EXPECT_NE(data.find(R"("text":"to [EM")"), std::string::npos) << data;
}

}  // namespace
}  // namespace sluice::guardrails
