#include "config/scalars.h"

#include <gtest/gtest.h>

namespace sluice::config {
namespace {

TEST(ParseSizeTest, AcceptsIntegersAndBinaryUnits) {
  EXPECT_EQ(parse_size("0").value(), 0u);
  EXPECT_EQ(parse_size("512").value(), 512u);
  EXPECT_EQ(parse_size("512B").value(), 512u);
  EXPECT_EQ(parse_size("64KiB").value(), 64u * 1024);
  EXPECT_EQ(parse_size("8MiB").value(), 8u * 1024 * 1024);
  EXPECT_EQ(parse_size("8 MiB").value(), 8u * 1024 * 1024);
  EXPECT_EQ(parse_size("1GiB").value(), 1024u * 1024 * 1024);
}

TEST(ParseSizeTest, Rejects) {
  struct Case {
    const char* in;
    const char* message;
  };
  for (const Case& c : {
           Case{"", "expected a size such as 1048576, 64KiB or 8MiB, got \"\""},
           Case{"MiB", "expected a size such as 1048576, 64KiB or 8MiB, got \"MiB\""},
           Case{"-1", "must not be negative (got -1)"},
           Case{"8MB", "unknown size unit \"MB\" (use B, KiB, MiB or GiB; 1 KiB = 1024 bytes)"},
           Case{"8k", "unknown size unit \"k\" (use B, KiB, MiB or GiB; 1 KiB = 1024 bytes)"},
           Case{"8mib", "unknown size unit \"mib\" (use B, KiB, MiB or GiB; 1 KiB = 1024 bytes)"},
           Case{"1.5MiB",
                "unknown size unit \".5MiB\" (use B, KiB, MiB or GiB; 1 KiB = 1024 "
                "bytes)"},
           Case{"8  MiB",
                "unknown size unit \" MiB\" (use B, KiB, MiB or GiB; 1 KiB = 1024 "
                "bytes)"},
           Case{"99999999999999999999GiB", "number too large: 99999999999999999999"},
           Case{"17179869184GiB", "size too large: 17179869184GiB"},
       }) {
    SCOPED_TRACE(c.in);
    auto result = parse_size(c.in);
    ASSERT_FALSE(result);
    EXPECT_EQ(result.error().message(), c.message);
  }
}

TEST(ParseUnsignedTest, DigitsOnly) {
  EXPECT_EQ(parse_unsigned("0").value(), 0u);
  EXPECT_EQ(parse_unsigned("18446744073709551615").value(), 18446744073709551615ull);
  EXPECT_FALSE(parse_unsigned("18446744073709551616"));
  EXPECT_FALSE(parse_unsigned("+1"));
  EXPECT_FALSE(parse_unsigned(" 1"));
  EXPECT_FALSE(parse_unsigned("0x10"));
  EXPECT_FALSE(parse_unsigned("1e3"));
}

TEST(ParseBoolTest, TrueAndFalseOnly) {
  EXPECT_TRUE(parse_bool("true").value());
  EXPECT_TRUE(parse_bool("True").value());
  EXPECT_FALSE(parse_bool("FALSE").value());
  for (const char* text : {"yes", "no", "on", "off", "1", "0", ""}) {
    EXPECT_FALSE(parse_bool(text)) << text;
  }
}

TEST(ParseListenAddressTest, Forms) {
  auto v6 = parse_listen_address("[2001:db8::1]:443");
  ASSERT_TRUE(v6);
  EXPECT_EQ(v6->host, "2001:db8::1");
  EXPECT_EQ(v6->port, 443);
  for (const char* bad : {"", ":", "host:", "host:-1", "host:8o", "[::1]", "[::1]8080",
                          "bad_host!:80", "1.2.3:80", "exa mple:80"}) {
    EXPECT_FALSE(parse_listen_address(bad)) << bad;
  }
}

TEST(NormalizeBaseUrlTest, Forms) {
  EXPECT_EQ(normalize_base_url("https://api.openai.com/v1").value(), "https://api.openai.com/v1");
  EXPECT_EQ(normalize_base_url("HTTP://[::1]:8000/v1/").value(), "HTTP://[::1]:8000/v1");
  EXPECT_EQ(normalize_base_url("http://localhost:11434").value(), "http://localhost:11434");
  for (const char* bad : {"", "localhost:11434/v1", "https://", "https://host:0/v1",
                          "https://host:99999/v1", "ws://host/v1", "https://host/v1?x",
                          "https://host/v1#f", "https://u@host/v1", "https://ho st/v1"}) {
    EXPECT_FALSE(normalize_base_url(bad)) << bad;
  }
}

TEST(Sha256HexTest, KnownVectors) {
  // FIPS 180-2 test vectors.
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_TRUE(is_sha256_hex(sha256_hex("abc")));
  EXPECT_FALSE(is_sha256_hex("abc"));
  EXPECT_FALSE(is_sha256_hex(std::string(63, 'a') + "g"));
}

TEST(HeaderNameTest, Tokens) {
  EXPECT_TRUE(is_header_name("OpenAI-Organization"));
  EXPECT_TRUE(is_header_name("x-mock_1"));
  EXPECT_FALSE(is_header_name(""));
  EXPECT_FALSE(is_header_name("X Bad"));
  EXPECT_FALSE(is_header_name("X:Bad"));
}

}  // namespace
}  // namespace sluice::config
