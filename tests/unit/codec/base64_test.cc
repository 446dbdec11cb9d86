#include "codec/base64.h"

#include <gtest/gtest.h>

namespace sluice::codec {
namespace {

// RFC 4648 section 10's test vectors.
TEST(Base64Test, TheRfcVectorsEncodeAndDecode) {
  const std::pair<std::string_view, std::string_view> kVectors[] = {
      {"", ""},
      {"f", "Zg=="},
      {"fo", "Zm8="},
      {"foo", "Zm9v"},
      {"foob", "Zm9vYg=="},
      {"fooba", "Zm9vYmE="},
      {"foobar", "Zm9vYmFy"},
  };
  for (const auto& [bytes, text] : kVectors) {
    EXPECT_EQ(base64(bytes), text);
    EXPECT_EQ(decode_base64(text), std::string(bytes)) << text;
  }
}

TEST(Base64Test, TheUrlAlphabetHasNoPaddingAndDecodesToo) {
  const std::string bytes = "\xfb\xff\xbf";
  EXPECT_EQ(base64(bytes), "+/+/");
  EXPECT_EQ(base64(bytes, Base64Alphabet::kUrlUnpadded), "-_-_");
  EXPECT_EQ(base64("f", Base64Alphabet::kUrlUnpadded), "Zg");
  EXPECT_EQ(decode_base64("-_-_"), bytes);
  EXPECT_EQ(decode_base64("Zg"), "f");
}

TEST(Base64Test, WhatNoEncodingWritesIsRefused) {
  EXPECT_EQ(decode_base64("Zm9v\n"), std::nullopt);  // whitespace
  EXPECT_EQ(decode_base64("Z"), std::nullopt);       // a length no encoding has
  EXPECT_EQ(decode_base64("Zh=="), std::nullopt);    // bits after the last byte
  EXPECT_EQ(decode_base64("Zm9v!"), std::nullopt);
}

}  // namespace
}  // namespace sluice::codec
