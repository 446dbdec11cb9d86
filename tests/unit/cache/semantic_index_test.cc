#include "cache/semantic_index.h"

#include <limits>

#include <gtest/gtest.h>

#include "cache/vector_record.h"
#include "ir/request.h"

namespace sluice::cache {
namespace {

using namespace std::chrono_literals;

Key key(std::uint32_t n, std::uint8_t shard = 0) {
  Key k{};
  k[0] = static_cast<std::uint8_t>(n);
  k[1] = static_cast<std::uint8_t>(n >> 8);
  k[31] = shard;  // every bucket of a test in one shard, so its bound is one shard's
  return k;
}

std::vector<float> unit(std::vector<float> v) {
  EXPECT_TRUE(SemanticIndex::normalize(v));
  return v;
}

TEST(SemanticIndexTest, FindsTheNearestAboveTheThresholdInItsBucketOnly) {
  SemanticIndex index(1 << 20);
  index.insert(key(1), key(100), unit({1, 0, 0}));
  index.insert(key(1), key(101), unit({1, 0.1F, 0}));
  index.insert(key(2), key(200), unit({1, 0.01F, 0}));  // another bucket (tenant): never

  const std::vector<float> query = unit({1, 0.02F, 0});
  auto match = index.nearest(key(1), query, 0.97F);
  ASSERT_TRUE(match);
  EXPECT_EQ(match->answer, key(100));
  EXPECT_GT(match->similarity, 0.999F);

  EXPECT_FALSE(index.nearest(key(1), unit({0, 1, 0}), 0.97F)) << "below the threshold";
  EXPECT_FALSE(index.nearest(key(3), query, 0.5F)) << "an empty bucket";
  EXPECT_FALSE(index.nearest(key(1), unit({1, 0}), 0.5F)) << "another dimension is never compared";
}

TEST(SemanticIndexTest, ReplacesEraseAndEvictsOldestFirstWithinItsBound) {
  const std::size_t one = SemanticIndex::vector_bytes(4);
  SemanticIndex index(16 * 3 * one);  // three vectors per shard
  for (std::uint32_t i = 1; i <= 3; ++i) {
    index.insert(key(i), key(100 + i), unit({1, static_cast<float>(i), 0, 0}));
  }
  index.insert(key(1), key(101), unit({0, 0, 1, 0}));  // replaced, not added
  EXPECT_EQ(index.stats().vectors, 3U);
  index.insert(key(4), key(104), unit({0, 0, 0, 1}));  // the bound: the oldest goes
  EXPECT_EQ(index.stats().vectors, 3U);
  EXPECT_EQ(index.stats().evictions, 1U);
  EXPECT_FALSE(index.nearest(key(2), unit({1, 2, 0, 0}), 0.99F)) << "key(2) was the oldest";
  EXPECT_TRUE(index.nearest(key(1), unit({0, 0, 1, 0}), 0.99F)) << "the replaced one is new";
  index.erase(key(1), key(101));
  EXPECT_FALSE(index.nearest(key(1), unit({0, 0, 1, 0}), 0.5F));
  EXPECT_LE(index.stats().bytes, index.stats().capacity);

  // Replacing one vector over and over keeps the bookkeeping bounded.
  for (int i = 0; i < 10000; ++i) {
    index.insert(key(9), key(109), unit({1, 1, 0, 0}));
  }
  EXPECT_EQ(index.stats().vectors, 3U);
}

TEST(SemanticIndexTest, ABucketHoldsAtMostItsBoundSoNoScanIsLonger) {
  SemanticIndex index(64 << 20);
  for (std::uint32_t i = 0; i <= SemanticIndex::kMaxBucketVectors; ++i) {
    index.insert(key(1), key(i), unit({1, static_cast<float>(i % 7), 1}));
  }
  EXPECT_EQ(index.stats().vectors, SemanticIndex::kMaxBucketVectors);
  EXPECT_EQ(index.stats().evictions, 1U);
  EXPECT_FALSE(index.nearest(key(1), unit({1, 0, 1}), 0.9999F) &&
               index.nearest(key(1), unit({1, 0, 1}), 0.9999F)->answer == key(0))
      << "the first one in went first";
}

TEST(SemanticIndexTest, TheSharedLogsReadPositionOnlyMovesOnAndGoesWithItsBucket) {
  SemanticIndex index(1 << 20);
  EXPECT_EQ(index.read_to(key(1)), LogPosition{});
  index.set_read_to(key(1), {5, 0});  // a bucket with no vectors keeps no position
  EXPECT_EQ(index.read_to(key(1)), LogPosition{});
  index.insert(key(1), key(100), unit({1, 0}));
  index.set_read_to(key(1), {5, 1});
  index.set_read_to(key(1), {4, 9});  // another worker's older read: not back
  EXPECT_EQ(index.read_to(key(1)), (LogPosition{5, 1}));
  EXPECT_EQ(index.read_to(key(2)), LogPosition{});
  // Its last vector gone, the bucket is read from the start again (what it held is gone too).
  index.erase(key(1), key(100));
  EXPECT_EQ(index.read_to(key(1)), LogPosition{});
}

TEST(VectorRecordTest, ARecordIsItsAnswerAndUnitVectorInAnyByteOrder) {
  const std::vector<float> v = unit({3, -4, 0});
  const std::string bytes = encode_vector_record(key(7), v);
  ASSERT_EQ(bytes.size(), 32u + 3 * 4);
  // Little-endian IEEE-754: 0.6f is 0x3f19999a.
  EXPECT_EQ(static_cast<unsigned char>(bytes[32]), 0x9a);
  EXPECT_EQ(static_cast<unsigned char>(bytes[35]), 0x3f);
  std::optional<VectorRecord> read = decode_vector_record(bytes);
  ASSERT_TRUE(read.has_value());
  EXPECT_EQ(read->answer, key(7));
  EXPECT_EQ(read->unit, v);
}

TEST(VectorRecordTest, BytesThatAreNotARecordAreRefused) {
  EXPECT_FALSE(decode_vector_record(""));
  EXPECT_FALSE(decode_vector_record(std::string(32, 'k')));       // a key, no vector
  EXPECT_FALSE(decode_vector_record(std::string(32 + 6, 'k')));   // not whole floats
  EXPECT_FALSE(decode_vector_record(std::string(32 + 8, '\0')));  // all zeros: no direction
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_FALSE(decode_vector_record(encode_vector_record(key(1), std::vector<float>{inf, 1})));
  EXPECT_FALSE(decode_vector_record(
      encode_vector_record(key(1), std::vector<float>(kMaxVectorDimensions + 1, 1.0F))));
  // A vector not of unit length (not written by us) is scaled to one.
  std::optional<VectorRecord> scaled =
      decode_vector_record(encode_vector_record(key(1), std::vector<float>{0, 2}));
  ASSERT_TRUE(scaled.has_value());
  EXPECT_EQ(scaled->unit, (std::vector<float>{0, 1}));
}

TEST(SemanticIndexTest, NormalizeRefusesWhatHasNoDirection) {
  std::vector<float> zero{0, 0};
  EXPECT_FALSE(SemanticIndex::normalize(zero));
  std::vector<float> empty;
  EXPECT_FALSE(SemanticIndex::normalize(empty));
  std::vector<float> nan{1, std::numeric_limits<float>::quiet_NaN()};
  EXPECT_FALSE(SemanticIndex::normalize(nan));
  std::vector<float> v{3, 4};
  ASSERT_TRUE(SemanticIndex::normalize(v));
  EXPECT_FLOAT_EQ(v[0], 0.6F);
}

TEST(SkipBreakerTest, OpensAfterThreeFailuresAndLetsOneProbeThroughLater) {
  using Time = SkipBreaker::SteadyTime;
  const Time t0 = Time() + 1000h;
  SkipBreaker breaker(3, 30s);
  EXPECT_TRUE(breaker.allow(t0));
  EXPECT_FALSE(breaker.failure(t0));
  EXPECT_FALSE(breaker.failure(t0));
  breaker.success();  // not in a row
  EXPECT_FALSE(breaker.failure(t0));
  EXPECT_FALSE(breaker.failure(t0));
  EXPECT_TRUE(breaker.failure(t0)) << "the third in a row opens it";
  EXPECT_FALSE(breaker.allow(t0 + 29s));
  EXPECT_TRUE(breaker.allow(t0 + 31s)) << "the probe";
  EXPECT_FALSE(breaker.allow(t0 + 31s)) << "one probe at a time";
  EXPECT_FALSE(breaker.failure(t0 + 31s)) << "a failed probe opens it again (no new log line)";
  EXPECT_FALSE(breaker.allow(t0 + 60s));
  EXPECT_TRUE(breaker.allow(t0 + 62s));
  breaker.abandon();  // the probe was not made after all
  EXPECT_TRUE(breaker.allow(t0 + 62s));
  EXPECT_TRUE(breaker.success()) << "a successful probe closes it";
  EXPECT_TRUE(breaker.allow(t0 + 62s));
  EXPECT_TRUE(breaker.allow(t0 + 62s));
}

ir::Request asking(std::string text, std::string system = "be brief") {
  ir::Request r;
  r.system.push_back(ir::ContentPart::make_text(std::move(system)));
  ir::Message m;
  m.content.push_back(ir::ContentPart::make_text(std::move(text)));
  r.messages.push_back(std::move(m));
  return r;
}

TEST(SemanticQuestionTest, TheLastUserTextIsComparedAndEverythingElseIsTheBucket) {
  const KeyScope a{"faq|oa/m", "g:a", {}};
  const KeyScope b{"faq|oa/m", "g:b", {}};
  auto q1 = semantic_question(asking("what is a gateway"), a, "embed|oa/e", 1);
  auto q2 = semantic_question(asking("what's a gateway"), a, "embed|oa/e", 1);
  ASSERT_TRUE(q1 && q2);
  EXPECT_EQ(q1->text, "what is a gateway");
  EXPECT_EQ(q1->bucket, q2->bucket) << "the wording is not in the bucket";
  EXPECT_NE(q1->bucket, semantic_question(asking("what is a gateway"), b, "embed|oa/e", 1)->bucket)
      << "nor is another tenant";
  EXPECT_NE(
      q1->bucket,
      semantic_question(asking("what is a gateway", "be verbose"), a, "embed|oa/e", 1)->bucket)
      << "the system prompt is";
  EXPECT_NE(q1->bucket, semantic_question(asking("what is a gateway"), a, "embed|oa/e2", 1)->bucket)
      << "and the embedding model";

  ir::Request r = asking("second question");
  ir::Message answer;
  answer.role = ir::Role::kAssistant;
  answer.content.push_back(ir::ContentPart::make_text("an answer"));
  r.messages.insert(r.messages.begin(), std::move(answer));
  ir::Message first;
  first.content.push_back(ir::ContentPart::make_text("first question"));
  r.messages.insert(r.messages.begin(), std::move(first));
  EXPECT_FALSE(semantic_question(r, a, "e", 1)) << "two user turns, max_turns 1";
  EXPECT_TRUE(semantic_question(r, a, "e", 2));

  ir::Request blank = asking("  \n");
  EXPECT_FALSE(semantic_question(blank, a, "e", 1));
  ir::Request image = asking("what is this");
  ir::ContentPart picture;
  picture.kind = ir::PartKind::kImage;
  picture.source = "https://example.com/x.png";
  image.messages.back().content.push_back(picture);
  EXPECT_FALSE(semantic_question(image, a, "e", 1)) << "an image is not text a vector stands for";
}

}  // namespace
}  // namespace sluice::cache
