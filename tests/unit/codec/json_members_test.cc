#include "codec/json_members.h"

#include <gtest/gtest.h>

namespace sluice::codec {
namespace {

constexpr MemberPath kTop{"max_tokens", ""};
constexpr MemberPath kNested{"generationConfig", "maxOutputTokens"};

TEST(JsonMembersTest, ReadsTopLevelAndNestedIntegers) {
  EXPECT_EQ(read_unsigned_member(R"({"a":1,"max_tokens":500})", kTop).value, 500u);
  EXPECT_EQ(read_unsigned_member(R"({"generationConfig":{"temperature":1,"maxOutputTokens":64}})",
                                 kNested)
                .value,
            64u);
  // A nested key of the same name elsewhere is not the member.
  EXPECT_FALSE(read_unsigned_member(R"({"x":{"max_tokens":5}})", kTop).present);
  EXPECT_FALSE(read_unsigned_member(R"({"maxOutputTokens":5})", kNested).present);
}

TEST(JsonMembersTest, NullIsAbsentAndOtherShapesAreInvalid) {
  EXPECT_FALSE(read_unsigned_member(R"({"max_tokens":null})", kTop).present);
  for (const char* body : {R"({"max_tokens":"5"})", R"({"max_tokens":1.5})", R"({"max_tokens":-1})",
                           R"({"max_tokens":1e3})", R"({"max_tokens":99999999999999999999})"}) {
    const UnsignedMember m = read_unsigned_member(body, kTop);
    EXPECT_TRUE(m.present) << body;
    EXPECT_FALSE(m.valid) << body;
  }
}

TEST(JsonMembersTest, RepeatedKeyReadsTheLastAndRewritesEvery) {
  const std::string body = R"({"max_tokens":1,"messages":[],"max_tokens":9000})";
  EXPECT_EQ(read_unsigned_member(body, kTop).value, 9000u);
  EXPECT_EQ(set_member(body, kTop, "100"), R"({"max_tokens":100,"messages":[],"max_tokens":100})");
}

TEST(JsonMembersTest, SetReplacesInPlaceAndLeavesEveryOtherByte) {
  const std::string body = "{ \"temperature\" : 0.30000000000000004 ,\n \"max_tokens\" : 4096 }";
  EXPECT_EQ(set_member(body, kTop, "256"),
            "{ \"temperature\" : 0.30000000000000004 ,\n \"max_tokens\" : 256 }");
}

TEST(JsonMembersTest, SetInsertsWhenAbsent) {
  EXPECT_EQ(set_member(R"({"model":"m"})", kTop, "7"), R"({"max_tokens":7,"model":"m"})");
  EXPECT_EQ(set_member(" { } ", kTop, "7"), R"( {"max_tokens":7 } )");
  EXPECT_EQ(set_member(R"({"contents":[]})", kNested, "8"),
            R"({"generationConfig":{"maxOutputTokens":8},"contents":[]})");
  EXPECT_EQ(set_member(R"({"generationConfig":{"topK":3}})", kNested, "8"),
            R"({"generationConfig":{"maxOutputTokens":8,"topK":3}})");
  EXPECT_EQ(set_member(R"({"generationConfig":{}})", kNested, "8"),
            R"({"generationConfig":{"maxOutputTokens":8}})");
  EXPECT_EQ(set_member(R"({"generationConfig":null})", kNested, "8"),
            R"({"generationConfig":{"maxOutputTokens":8}})");
}

TEST(JsonMembersTest, SetRefusesWhatItCannotRewrite) {
  EXPECT_FALSE(set_member("[1]", kTop, "1"));
  EXPECT_FALSE(set_member(R"({"generationConfig":"x"})", kNested, "1"));
}

TEST(JsonMembersTest, KeysWithEscapesAreTheirDecodedName) {
  // "max\u005ftokens" is max_tokens to every JSON reader upstream.
  const std::string body = R"({"max\u005ftokens":9000})";
  EXPECT_EQ(read_unsigned_member(body, kTop).value, 9000u);
  EXPECT_EQ(set_member(body, kTop, "5"), R"({"max\u005ftokens":5})");
}

TEST(JsonMembersTest, StringsThatLookLikeKeysAreNotMembers) {
  const std::string body = R"({"messages":[{"content":"\"max_tokens\":1"}],"max_tokens":3})";
  EXPECT_EQ(read_unsigned_member(body, kTop).value, 3u);
  EXPECT_EQ(set_member(body, kTop, "2"),
            R"({"messages":[{"content":"\"max_tokens\":1"}],"max_tokens":2})");
}

TEST(JsonMembersTest, RenameKeepsTheValue) {
  EXPECT_EQ(rename_member(R"({"a":1,"max_tokens":12})", kTop, "max_completion_tokens"),
            R"({"a":1,"max_completion_tokens":12})");
  EXPECT_EQ(rename_member(R"({"a":1})", kTop, "x"), R"({"a":1})");
}

// Values are skipped from quote to quote: an escaped quote, or a run of backslashes before the
// closing one, must not end or prolong a string.
TEST(JsonMembersTest, SkippedStringsEndAtTheirUnescapedQuote) {
  // "a\"b\\" then a member that only exists if the string ended where JSON says.
  const std::string body = R"({"content":"a\"b\\","max_tokens":5})";
  EXPECT_EQ(read_unsigned_member(body, {"max_tokens", ""}).value, 5u);
  // \\\" is an escaped backslash then an escaped quote: still inside the string.
  const std::string inside = R"({"content":"x\\\",\"max_tokens\":9","n":1})";
  EXPECT_FALSE(read_unsigned_member(inside, {"max_tokens", ""}).present);
  EXPECT_EQ(read_unsigned_member(inside, {"n", ""}).value, 1u);
  // Inside arrays and objects too, and a long prompt in between.
  const std::string nested = R"({"messages":[{"content":")" + std::string(100000, 'q') +
                             R"(\\"},{"content":"\"}"}],"max_tokens":7})";
  EXPECT_EQ(read_unsigned_member(nested, {"max_tokens", ""}).value, 7u);
}

TEST(JsonMembersTest, RemoveMemberKeepsEveryOtherMembersBytes) {
  EXPECT_EQ(remove_member(R"({"model":"m","max_tokens":1e2,"x":{"model":1}})", "model"),
            R"({"max_tokens":1e2,"x":{"model":1}})");
  EXPECT_EQ(remove_member(R"({"a":1,"model":"m"})", "model"), R"({"a":1})");
  EXPECT_EQ(remove_member(R"({"a":1,"model":1,"model":2})", "model"), R"({"a":1})");
  EXPECT_EQ(remove_member(R"( { "model" : "m" } )", "model"), R"( {} )");
  EXPECT_EQ(remove_member(R"({"a":1})", "model"), R"({"a":1})");
  EXPECT_EQ(remove_member("[1]", "model"), "[1]");
}

}  // namespace
}  // namespace sluice::codec
