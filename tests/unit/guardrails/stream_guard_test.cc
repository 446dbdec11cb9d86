#include "guardrails/stream_guard.h"

#include <chrono>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "../support/chat_deltas.h"

// Output guardrails on streams: held-back events are released once the text has moved on, a
// block is found before any byte of its match went out wherever the match was split, the end
// releases what is held, and a find is counted once however often it is seen.
namespace sluice::guardrails {
namespace {

using config::GuardrailAction;

Policies output_policy(GuardrailAction card, GuardrailAction email) {
  config::GuardrailPolicy p;
  p.name = "out";
  p.output = true;
  config::GuardrailDetector c;
  c.name = "payment_card";
  c.action = card;
  config::GuardrailDetector e;
  e.name = "email";
  e.action = email;
  p.detectors = {c, e};
  return Policies{*Policy::compile(p)};
}

using testing::chat_delta;
using testing::content_of;

TEST(StreamGuard, ACardSplitAtEveryPlaceIsBlockedBeforeAnyOfItGoesOut) {
  const std::string answer = "Sure, the number is 4111 1111 1111 1111 as requested.";
  const std::size_t card = answer.find("4111");
  const Policies policies = output_policy(GuardrailAction::kBlock, GuardrailAction::kFlag);
  for (std::size_t piece = 1; piece <= 7; ++piece) {
    StreamGuard guard(policies, 32);
    std::string out;
    bool stopped = false;
    for (std::size_t at = 0; at < answer.size() && !stopped; at += piece) {
      std::string data = chat_delta(answer.substr(at, piece));
      stopped = !guard.pass(data, false);
      out += data;
    }
    ASSERT_TRUE(stopped) << "piece " << piece;
    EXPECT_LE(content_of(out).size(), card) << "piece " << piece << ": " << content_of(out);
    EXPECT_EQ(guard.verdict().summary(), "out/payment_card:block=1");
    EXPECT_EQ(guard.held_bytes(), 0u);
  }
}

TEST(StreamGuard, TextGoesOutOnceItIsHoldBackBehind_AndAllOfItAtTheEnd) {
  const Policies policies = output_policy(GuardrailAction::kBlock, GuardrailAction::kFlag);
  StreamGuard guard(policies, 10);
  std::string data = chat_delta("hello ");
  ASSERT_TRUE(guard.pass(data, false));
  EXPECT_EQ(data, "") << "6 characters: less than the hold-back behind it";
  data = chat_delta("world, how are you");
  ASSERT_TRUE(guard.pass(data, false));
  EXPECT_EQ(content_of(data), "hello ");
  data = "data: [DONE]\n\n";
  ASSERT_TRUE(guard.pass(data, true));
  EXPECT_EQ(content_of(data), "world, how are you");
  EXPECT_NE(data.find("[DONE]"), std::string::npos);
  EXPECT_TRUE(guard.verdict().empty());
}

// A time bound: an event held that long goes out with the next write, however little text
// followed it; a match whose start went out so still ends the stream when it completes.
TEST(StreamGuard, TextHeldLongerThanTheTimeBoundGoesOutWithTheNextWrite) {
  using std::chrono::milliseconds;
  const Policies policies = output_policy(GuardrailAction::kBlock, GuardrailAction::kFlag);
  StreamGuard guard(policies, 64, milliseconds(100));
  const StreamGuard::Time t0{};
  std::string data = chat_delta("Hello");
  ASSERT_TRUE(guard.pass(data, false, t0));
  EXPECT_EQ(data, "") << "5 characters, just arrived: held";
  data = chat_delta(" there");
  ASSERT_TRUE(guard.pass(data, false, t0 + milliseconds(99)));
  EXPECT_EQ(data, "") << "not held 100 ms yet";
  data = chat_delta(", friend");
  ASSERT_TRUE(guard.pass(data, false, t0 + milliseconds(120)));
  EXPECT_EQ(content_of(data), "Hello") << "held 120 ms: out; \" there\" only 21 ms: stays";
  // A card whose first digits the time bound let go: the rest is never sent, the stream ends.
  data = chat_delta(" 4111 1111");
  ASSERT_TRUE(guard.pass(data, false, t0 + milliseconds(130)));
  data = chat_delta(" ");
  ASSERT_TRUE(guard.pass(data, false, t0 + milliseconds(300)));
  EXPECT_EQ(content_of(data), " there, friend 4111 1111") << "all but the newest held >= 100 ms";
  data = chat_delta("1111 1111 is it");
  EXPECT_FALSE(guard.pass(data, false, t0 + milliseconds(310)));
  EXPECT_EQ(data, "");
  EXPECT_EQ(guard.verdict().summary(), "out/payment_card:block=1");
}

// What the relay's keep-alive relies on during an upstream pause: when the oldest held event
// is due, and a pass of no new bytes then releasing it.
TEST(StreamGuard, SaysWhenHeldTextIsDueAndReleasesItOnNoNewBytes) {
  using std::chrono::milliseconds;
  const Policies policies = output_policy(GuardrailAction::kBlock, GuardrailAction::kFlag);
  StreamGuard guard(policies, 64, milliseconds(100));
  const StreamGuard::Time t0{};
  EXPECT_EQ(guard.release_due(), std::nullopt) << "nothing held";
  std::string data = chat_delta("Hello");
  ASSERT_TRUE(guard.pass(data, false, t0));
  data = chat_delta(" there");
  ASSERT_TRUE(guard.pass(data, false, t0 + milliseconds(40)));
  EXPECT_EQ(guard.release_due(), t0 + milliseconds(100)) << "the oldest's arrival + the bound";
  data.clear();
  ASSERT_TRUE(guard.pass(data, false, t0 + milliseconds(100)));
  EXPECT_EQ(content_of(data), "Hello");
  EXPECT_EQ(guard.release_due(), t0 + milliseconds(140)) << "now the next one's";
  data.clear();
  ASSERT_TRUE(guard.pass(data, false, t0 + milliseconds(140)));
  EXPECT_EQ(content_of(data), " there");
  EXPECT_EQ(guard.release_due(), std::nullopt);
}

TEST(StreamGuard, WithoutATimeBoundTimeDoesNotRelease) {
  const Policies policies = output_policy(GuardrailAction::kBlock, GuardrailAction::kFlag);
  StreamGuard guard(policies, 64);
  std::string data = chat_delta("Hello");
  ASSERT_TRUE(guard.pass(data, false, StreamGuard::Time{}));
  data = chat_delta(" there");
  ASSERT_TRUE(guard.pass(data, false, StreamGuard::Time{} + std::chrono::hours(1)));
  EXPECT_EQ(data, "");
  EXPECT_EQ(guard.release_due(), std::nullopt) << "no clock: never due";
}

TEST(StreamGuard, AFlagIsCountedOnceWhileItGrows_ARedactionBlocks) {
  {
    const Policies flag = output_policy(GuardrailAction::kBlock, GuardrailAction::kFlag);
    StreamGuard guard(flag, 8);
    std::string all;
    for (std::string_view piece : {"mail ann@exa", "mple.co", "m and bob", "@b.example!"}) {
      std::string data = chat_delta(piece);
      ASSERT_TRUE(guard.pass(data, false));
      all += data;
    }
    std::string end;
    ASSERT_TRUE(guard.pass(end, true));
    all += end;
    EXPECT_EQ(content_of(all), "mail ann@example.com and bob@b.example!");
    EXPECT_EQ(guard.verdict().summary(), "out/email:flag=2");
  }
  {
    // A stream cannot take back a redaction: it blocks.
    const Policies redact = output_policy(GuardrailAction::kBlock, GuardrailAction::kRedact);
    StreamGuard guard(redact, 8);
    std::string data = chat_delta("write to ann@example.com today");
    EXPECT_FALSE(guard.pass(data, false));
    EXPECT_EQ(data, "");
    EXPECT_EQ(guard.verdict().summary(), "out/email:block=1");
  }
}

// A match at the newest character may not be one once the next arrives: sixteen digits that
// turn out to run into a part number's letters are not a card.
TEST(StreamGuard, AFindAtTheNewestCharacterWaitsForTheNext) {
  const Policies policies = output_policy(GuardrailAction::kBlock, GuardrailAction::kFlag);
  StreamGuard guard(policies, 32);
  std::string out;
  for (std::string_view piece : {"part 4111111111111111", "XB was shipped, see the log"}) {
    std::string data = chat_delta(piece);
    ASSERT_TRUE(guard.pass(data, false)) << "blocked on a prefix of a longer number";
    out += data;
  }
  std::string end;
  ASSERT_TRUE(guard.pass(end, true));
  out += end;
  EXPECT_EQ(content_of(out), "part 4111111111111111XB was shipped, see the log");
  EXPECT_TRUE(guard.verdict().empty()) << guard.verdict().summary();
}

// The ids and pads an event carries beside its delta are not the model's text: read as text,
// a Responses item_id between two argument fragments cut the card in two and it went out.
TEST(StreamGuard, OnlyTheDeltasTextIsRead_NotTheIdsBetweenThem) {
  const Policies policies = output_policy(GuardrailAction::kBlock, GuardrailAction::kFlag);
  StreamGuard guard(policies, 32);
  bool stopped = false;
  for (std::string_view piece : {R"({\"note\": \"pay with 4111 1111)", R"( 1111 1111 now\"})"}) {
    std::string data =
        "event: response.function_call_arguments.delta\ndata: {\"type\":\"response.function_"
        "call_arguments.delta\",\"item_id\":\"fc_68a1\",\"obfuscation\":\"Xq9z\",\"output_index\""
        ":0,\"delta\":\"" +
        std::string(piece) + "\"}\n\n";
    stopped = stopped || !guard.pass(data, false);
  }
  EXPECT_TRUE(stopped);
  EXPECT_EQ(guard.verdict().summary(), "out/payment_card:block=1");
}

TEST(StreamGuard, AResponsesStreamIsReadFromItsDeltasOnly) {
  const Policies policies = output_policy(GuardrailAction::kBlock, GuardrailAction::kFlag);
  StreamGuard guard(policies, 4);
  std::string data =
      "event: response.created\ndata: {\"type\":\"response.created\",\"response\":"
      "{\"instructions\":\"mail ops@corp.example\"}}\n\n"
      "event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\","
      "\"delta\":\"ask ann@example.com\"}\n\n"
      "event: response.output_text.done\ndata: {\"type\":\"response.output_text.done\","
      "\"text\":\"ask ann@example.com\"}\n\n";
  ASSERT_TRUE(guard.pass(data, true));
  EXPECT_EQ(guard.verdict().summary(), "out/email:flag=1")
      << "the instructions are the request's; the done event repeats the delta";
}

// Gated (an external checker judges the stream): text waits for cleared() whatever the
// hold-back says, the end included; the checker is shown the new text with the hold-back's
// characters before it, and the window it keeps is bounded by that.
TEST(StreamGuard, GatedTextWaitsForTheChecker_TheEndIncluded) {
  const Policies policies = output_policy(GuardrailAction::kBlock, GuardrailAction::kFlag);
  StreamGuard guard(policies, 4);
  guard.gate();
  std::string data = chat_delta("Hello there");
  ASSERT_TRUE(guard.take(data, false));
  EXPECT_EQ(data, "");
  std::string out;
  guard.release(out, false);
  EXPECT_EQ(out, "") << "hold-back passed, but not cleared";
  EXPECT_EQ(guard.unchecked_chars(), 11u);
  EXPECT_EQ(guard.unchecked_text(4), "Hello there");
  guard.cleared();
  EXPECT_EQ(guard.unchecked_chars(), 0u);
  guard.release(out, false);
  EXPECT_EQ(out, "") << "cleared, but not hold_back characters behind the newest";
  out.clear();
  data = chat_delta(", friend");
  ASSERT_TRUE(guard.take(data, true));
  EXPECT_EQ(guard.unchecked_text(4), "here, friend") << "4 characters of context";
  guard.release(out, true);
  EXPECT_EQ(content_of(out), "Hello there") << "the end releases what was cleared";
  out.clear();
  guard.release(out, true);
  EXPECT_EQ(out, "") << "the last write's own text waits for the checker too";
  guard.cleared();
  guard.release(out, true);
  EXPECT_EQ(content_of(out), ", friend");
  EXPECT_EQ(guard.held_bytes(), 0u);
}

TEST(StreamGuard, GatedHeldTextIsNotDueByTime_ADropEmptiesIt) {
  using std::chrono::milliseconds;
  const Policies policies = output_policy(GuardrailAction::kBlock, GuardrailAction::kFlag);
  StreamGuard guard(policies, 64, milliseconds(100));
  guard.gate();
  const StreamGuard::Time t0{};
  std::string data = chat_delta("Hello");
  ASSERT_TRUE(guard.pass(data, false, t0));
  EXPECT_EQ(guard.release_due(), std::nullopt) << "it waits for the checker, not for time";
  data.clear();
  ASSERT_TRUE(guard.pass(data, false, t0 + milliseconds(500)));
  EXPECT_EQ(data, "");
  guard.cleared();
  EXPECT_EQ(guard.release_due(), t0 + milliseconds(100));
  data = chat_delta(" bad");
  ASSERT_TRUE(guard.take(data, false, t0 + milliseconds(500)));
  guard.drop();
  EXPECT_EQ(guard.held_bytes(), 0u);
}

}  // namespace
}  // namespace sluice::guardrails
