#include "cache/entry_codec.h"

#include <gtest/gtest.h>

namespace sluice::cache {
namespace {

using namespace std::chrono_literals;

// Two machines: the writer's clocks and the reader's, whose steady clocks share no epoch.
const EntryClocks kWriter{std::chrono::system_clock::time_point(1'800'000'000s),
                          std::chrono::steady_clock::time_point(5'000s)};
const EntryClocks kReader{kWriter.wall_now + 2s, std::chrono::steady_clock::time_point(90'000s)};

Entry sample(std::string text = "The answer is 42.") {
  Entry e;
  e.alias = "chat";
  e.route = "chat|oa/gpt-x";
  e.tenant = "g:team-a";
  e.provider = "oa";
  e.model = "gpt-x";
  e.stored_at = kWriter.wall_now;
  e.fresh_until = kWriter.steady_now + 300s;
  e.stale_until = kWriter.steady_now + 360s;
  e.request_digest[0] = 7;
  e.request_digest[31] = 9;
  ir::Response& a = e.answer;
  a.id = "chatcmpl-1";
  a.model = "gpt-x-2026";
  a.finish = ir::FinishReason::kToolCalls;
  a.created = 1'800'000'000;
  a.usage = ir::Usage{120, 40, 100, 3, 12};
  ir::ContentPart thinking;
  thinking.kind = ir::PartKind::kReasoning;
  thinking.text = "Let me think.";
  thinking.signature = "sig-abc";
  a.content.push_back(thinking);
  a.content.push_back(ir::ContentPart::make_text(std::move(text)));
  ir::ContentPart call;
  call.kind = ir::PartKind::kToolCall;
  call.id = "call_1";
  call.name = "lookup";
  call.arguments = R"({"q":"x"})";
  a.content.push_back(call);
  e.bytes = entry_bytes(e);
  return e;
}

TEST(EntryCodecTest, AnEntryComesBackWholeOnAnotherMachinesClocks) {
  const Entry e = sample();
  const std::optional<std::string> record = encode_entry(e, kWriter, 1 << 20);
  ASSERT_TRUE(record);
  const std::optional<Entry> back = decode_entry(*record, kReader, 1 << 20);
  ASSERT_TRUE(back);
  EXPECT_EQ(back->alias, e.alias);
  EXPECT_EQ(back->route, e.route);
  EXPECT_EQ(back->tenant, e.tenant);
  EXPECT_EQ(back->provider, e.provider);
  EXPECT_EQ(back->model, e.model);
  EXPECT_EQ(back->request_digest, e.request_digest);
  EXPECT_EQ(back->stored_at, e.stored_at);
  // 300 s fresh at writing, read 2 s later: 298 s left on the reader's steady clock.
  EXPECT_EQ(back->fresh_until, kReader.steady_now + 298s);
  EXPECT_EQ(back->stale_until, kReader.steady_now + 358s);
  EXPECT_EQ(back->answer.id, "chatcmpl-1");
  EXPECT_EQ(back->answer.model, "gpt-x-2026");
  EXPECT_EQ(back->answer.finish, ir::FinishReason::kToolCalls);
  EXPECT_EQ(back->answer.created, 1'800'000'000);
  EXPECT_EQ(back->answer.usage, e.answer.usage);
  ASSERT_EQ(back->answer.content.size(), 3u);
  EXPECT_EQ(back->answer.content[0].kind, ir::PartKind::kReasoning);
  EXPECT_EQ(back->answer.content[0].signature, "sig-abc");
  EXPECT_EQ(back->answer.content[1].text, "The answer is 42.");
  EXPECT_EQ(back->answer.content[2].arguments, R"({"q":"x"})");
  EXPECT_EQ(back->bytes, e.bytes);
}

TEST(EntryCodecTest, LargeRecordsAreDeflatedAndStillReadBack) {
  const Entry e = sample(std::string(20'000, 'a') + " and more");
  const std::optional<std::string> plain = encode_entry(e, kWriter, 1 << 20);
  const std::optional<std::string> small = encode_entry(e, kWriter, 4096);
  ASSERT_TRUE(plain && small);
  EXPECT_LT(small->size(), plain->size() / 10);
  const std::optional<Entry> back = decode_entry(*small, kReader, 1 << 20);
  ASSERT_TRUE(back);
  EXPECT_EQ(back->answer.content[1].text, e.answer.content[1].text);
  // Inflating past the reader's bound is refused before any allocation of that size.
  EXPECT_FALSE(decode_entry(*small, kReader, 10'000));
}

TEST(EntryCodecTest, WhatThisVersionDidNotWriteIsNotAnEntry) {
  const std::string record = *encode_entry(sample(), kWriter, 1 << 20);
  EXPECT_FALSE(decode_entry("", kReader, 1 << 20));
  EXPECT_FALSE(decode_entry("SLC2" + record.substr(4), kReader, 1 << 20));
  EXPECT_FALSE(decode_entry(record + "x", kReader, 1 << 20));
  // Cut anywhere: never an entry, never a read past the end (ASan).
  for (std::size_t n = 0; n < record.size(); ++n) {
    EXPECT_FALSE(decode_entry(record.substr(0, n), kReader, 1 << 20)) << n;
  }
  // A flipped byte is caught or read as some entry, never a crash.
  for (std::size_t i = 4; i < record.size(); ++i) {
    std::string bad = record;
    bad[i] = static_cast<char>(bad[i] ^ 0xff);
    (void)decode_entry(bad, kReader, 1 << 20);
  }
  const std::string deflated = *encode_entry(sample(std::string(9000, 'z')), kWriter, 100);
  std::string corrupt = deflated;
  corrupt[corrupt.size() / 2] ^= 0x55;
  EXPECT_FALSE(decode_entry(corrupt, kReader, 1 << 20));
}

TEST(EntryCodecTest, AnAnswerWithPartsAModelNeverProducesIsNotEncoded) {
  Entry e = sample();
  ir::ContentPart image;
  image.kind = ir::PartKind::kImage;
  image.source = "https://example.com/x.png";
  e.answer.content.push_back(image);
  EXPECT_FALSE(encode_entry(e, kWriter, 1 << 20));
}

}  // namespace
}  // namespace sluice::cache
