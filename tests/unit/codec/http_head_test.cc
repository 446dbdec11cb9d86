#include "codec/http_head.h"

#include <gtest/gtest.h>

namespace sluice::codec {
namespace {

TEST(HeadWriter, ResponseHead) {
  std::string out = "stale bytes from the previous response";
  HeadWriter(out)
      .status_line(11, 429)
      .field("Content-Type", "application/json")
      .field("Retry-After", "3")
      .field("Content-Length", std::uint64_t{12})
      .end();
  EXPECT_EQ(out,
            "HTTP/1.1 429 Too Many Requests\r\n"
            "Content-Type: application/json\r\n"
            "Retry-After: 3\r\n"
            "Content-Length: 12\r\n"
            "\r\n");
}

TEST(HeadWriter, Http10StatusLineAndUnknownStatus) {
  std::string out;
  HeadWriter(out).status_line(10, 200).end();
  EXPECT_EQ(out, "HTTP/1.0 200 OK\r\n\r\n");
  HeadWriter(out).status_line(11, 529).end();
  EXPECT_EQ(out.substr(0, 13), "HTTP/1.1 529 ");
  HeadWriter(out).status_line(11, 299).end();
  EXPECT_EQ(out, "HTTP/1.1 299 \r\n\r\n");
  EXPECT_EQ(reason_phrase(413), "Content Too Large");
  EXPECT_EQ(reason_phrase(100), "Continue");
}

TEST(HeadWriter, RequestLineJoinsPrefixAndSuffix) {
  std::string out;
  HeadWriter(out)
      .request_line("POST", "/openai/v1", "/chat/completions")
      .field("Host", "h:1")
      .end();
  EXPECT_EQ(out, "POST /openai/v1/chat/completions HTTP/1.1\r\nHost: h:1\r\n\r\n");
}

TEST(HeadWriter, DropsFieldsWithLineBreaks) {
  std::string out;
  HeadWriter(out)
      .field("x-ok", "1")
      .field("x-bad", "a\r\nInjected: yes")
      .field("x-bad2\n", "v")
      .field("x-nul", std::string_view("a\0b", 3))
      .field("x-also-ok", "2")
      .end();
  EXPECT_EQ(out, "x-ok: 1\r\nx-also-ok: 2\r\n\r\n");
}

TEST(HeadWriter, ChunkSizeLine) {
  char buf[20];
  EXPECT_EQ(std::string(buf, format_chunk_size(buf, 0)), "0\r\n");
  EXPECT_EQ(std::string(buf, format_chunk_size(buf, 255)), "ff\r\n");
  EXPECT_EQ(std::string(buf, format_chunk_size(buf, 0x10000)), "10000\r\n");
}

}  // namespace
}  // namespace sluice::codec
