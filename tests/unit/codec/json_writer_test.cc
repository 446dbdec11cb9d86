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

namespace sluice::codec {
namespace {

// Byte by byte, the way append_json_escaped is specified: what its word-at-a-time scan and
// buffer growth must reproduce.
std::string reference_escaped(std::string_view text) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0x80) {
      std::string one;
      append_json_escaped(one, text.substr(i, 1));  // never well-formed alone
      std::size_t n = 0;
      for (std::size_t len = 4; len >= 2 && n == 0; --len) {
        if (i + len <= text.size()) {
          std::string seq;
          append_json_escaped(seq, text.substr(i, len));
          if (seq == text.substr(i, len)) {
            n = len;
          }
        }
      }
      if (n > 0) {
        out.append(text.substr(i, n));
        i += n - 1;
      } else {
        out.append("\\ufffd");
      }
      continue;
    }
    switch (c) {
      case '"':
        out.append("\\\"");
        break;
      case '\\':
        out.append("\\\\");
        break;
      case '\n':
        out.append("\\n");
        break;
      case '\r':
        out.append("\\r");
        break;
      case '\t':
        out.append("\\t");
        break;
      case '\b':
        out.append("\\b");
        break;
      case '\f':
        out.append("\\f");
        break;
      default:
        if (c < 0x20) {
          static constexpr char kHex[] = "0123456789abcdef";
          out.append("\\u00").push_back(kHex[c >> 4]);
          out.push_back(kHex[c & 0xF]);
        } else {
          out.push_back(static_cast<char>(c));
        }
    }
  }
  return out;
}

TEST(JsonEscape, EveryByteAtEveryOffsetOfAWord) {
  // Each byte value alone and amid plain text at each position of an 8-byte word, after a
  // prefix already in `out` (the escape appends).
  for (int b = 0; b < 256; ++b) {
    for (std::size_t at = 0; at < 17; ++at) {
      std::string text(24, 'a');
      text[at] = static_cast<char>(b);
      std::string out = "prefix";
      append_json_escaped(out, text);
      ASSERT_EQ(out, "prefix" + reference_escaped(text)) << "byte " << b << " at " << at;
    }
  }
}

TEST(JsonEscape, TextDenseWithEscapesGrowsTheOutput) {
  std::string text;
  for (int i = 0; i < 2000; ++i) {
    text += std::to_string(i) + "\n\"\x01\\";
  }
  text += "\xe2\x82\xac \xff\xc3";  // then a euro sign, a malformed byte, a truncated sequence
  std::string out;
  EXPECT_FALSE(append_json_escaped(out, text));
  EXPECT_EQ(out, reference_escaped(text));
}

TEST(JsonEscape, ReportsWhetherTheTextWasWellFormed) {
  std::string out;
  EXPECT_TRUE(append_json_escaped(out, "plain \"quoted\"\n\xf0\x9f\x98\x80"));
  EXPECT_FALSE(append_json_escaped(out, "\xe2\x82"));
  EXPECT_TRUE(append_json_escaped(out, ""));
}

TEST(EscapedText, WritesWhatEscapingTheWholeWrites) {
  EscapedText text;
  EXPECT_EQ(text.append("a\n"), "a\\n");
  EXPECT_EQ(text.append("\xe2\x82\xac\"b"), "\xe2\x82\xac\\\"b");
  EXPECT_EQ(text.text(), "a\n\xe2\x82\xac\"b");
  std::string out;
  JsonWriter(out).string(text);
  EXPECT_EQ(out, "\"a\\n\xe2\x82\xac\\\"b\"");
}

TEST(EscapedText, ASequenceSplitBetweenPiecesIsWholeInTheWhole) {
  // Each piece alone is malformed (and escaped so when appended); joined they are a euro sign.
  EscapedText text;
  EXPECT_EQ(text.append("x\xe2\x82"), "x\\ufffd\\ufffd");
  EXPECT_EQ(text.append("\xac"), "\\ufffd");
  std::string out;
  JsonWriter(out).string(text);
  EXPECT_EQ(out, "\"x\xe2\x82\xac\"");
}

}  // namespace
}  // namespace sluice::codec
