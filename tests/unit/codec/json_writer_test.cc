#include "codec/json_writer.h"

#include <limits>

#include <gtest/gtest.h>

namespace sluice::codec {
namespace {

TEST(JsonWriter, EscapesQuotesBackslashesAndControlCharacters) {
  std::string out;
  JsonWriter(out).string(
      std::string_view("a\"b\\c\n\t\x01\x1f"
                       "d",
                       10));
  EXPECT_EQ(out, R"("a\"b\\c\n\t\u0001\u001fd")");
}

TEST(JsonWriter, CopiesUtf8Unchanged) {
  std::string out;
  JsonWriter(out).string("h\xC3\xA9llo \xF0\x9F\x98\x80");
  EXPECT_EQ(out, "\"h\xC3\xA9llo \xF0\x9F\x98\x80\"");
}

TEST(JsonWriter, ReplacesMalformedUtf8WithReplacementCharacter) {
  const auto esc = [](std::string_view in) {
    std::string out;
    append_json_escaped(out, in);
    return out;
  };
  EXPECT_EQ(esc("a\xff"
                "b"),
            "a\\ufffdb");                                              // 0xFF is never valid
  EXPECT_EQ(esc("\xc3"), "\\ufffd");                                   // truncated 2-byte sequence
  EXPECT_EQ(esc("\xc0\xaf"), "\\ufffd\\ufffd");                        // overlong '/'
  EXPECT_EQ(esc("\xed\xa0\x80"), "\\ufffd\\ufffd\\ufffd");             // UTF-16 surrogate D800
  EXPECT_EQ(esc("\xf4\x90\x80\x80"), "\\ufffd\\ufffd\\ufffd\\ufffd");  // above U+10FFFF
  EXPECT_EQ(esc("\xe2\x82"), "\\ufffd\\ufffd");                        // truncated at the end
  EXPECT_EQ(esc("ok \xe2\x82\xac \xf0\x9f\x98\x80"), "ok \xe2\x82\xac \xf0\x9f\x98\x80");
}

TEST(JsonWriter, WritesAnObject) {
  std::string out;
  JsonWriter w(out);
  w.ch('{').key("n").number(std::uint64_t{42}).ch(',').key("x").number(0.5).ch(',');
  w.key("neg").number(std::int64_t{-3}).ch(',').key("b").boolean(true).ch(',');
  w.key("nan").number(std::numeric_limits<double>::quiet_NaN()).ch('}');
  EXPECT_EQ(out, R"({"n":42,"x":0.5,"neg":-3,"b":true,"nan":null})");
}

}  // namespace
}  // namespace sluice::codec

namespace sluice::codec {
namespace {

TEST(JsonWriterNextKey, WritesACommaAndAQuotedKeyInOneAppend) {
  std::string out = "{\"a\":1";
  JsonWriter w(out);
  w.next_key("b").number(std::uint64_t{2}).next_key(std::string(70, 'k')).boolean(true).ch('}');
  EXPECT_EQ(out, "{\"a\":1,\"b\":2,\"" + std::string(70, 'k') + "\":true}");
}

}  // namespace
}  // namespace sluice::codec
