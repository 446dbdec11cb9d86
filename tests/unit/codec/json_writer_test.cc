#include "codec/json_writer.h"

#include <limits>

#include <gtest/gtest.h>

namespace sluice::codec {
namespace {

TEST(JsonWriter, EscapesQuotesBackslashesAndControlCharacters) {
  std::string out;
  JsonWriter(out).string(std::string_view("a\"b\\c\n\t\x01\x1f" "d", 10));
  EXPECT_EQ(out, R"("a\"b\\c\n\t\u0001\u001fd")");
}

TEST(JsonWriter, CopiesUtf8Unchanged) {
  std::string out;
  JsonWriter(out).string("h\xC3\xA9llo \xF0\x9F\x98\x80");
  EXPECT_EQ(out, "\"h\xC3\xA9llo \xF0\x9F\x98\x80\"");
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
