#include "codec/sse.h"

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <vector>

#include <gtest/gtest.h>

namespace sluice::codec {
namespace {

struct Parsed {
  std::string event, data, id, raw;
  bool has_data;
  bool operator==(const Parsed&) const = default;
};

std::vector<Parsed> parse_chunks(const std::vector<std::string_view>& chunks, bool finish = true) {
  SseParser p;
  std::vector<Parsed> out;
  SseEvent ev;
  auto drain = [&](SseParser::Status s) {
    while (s == SseParser::Status::kEvent) {
      out.push_back({std::string(ev.event), std::string(ev.data), std::string(ev.id),
                     std::string(ev.raw), ev.has_data});
      s = p.next(ev);
    }
    EXPECT_NE(s, SseParser::Status::kTooLarge);
  };
  for (auto c : chunks) {
    p.feed(c);
    drain(p.next(ev));
  }
  if (finish) {
    drain(p.finish(ev));
  }
  return out;
}

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(SseParser, ParsesFieldsAndJoinsDataLines) {
  auto evs = parse_chunks({"event: ping\ndata: a\ndata:b\nid: 7\n: comment\n\n"});
  ASSERT_EQ(evs.size(), 1u);
  EXPECT_EQ(evs[0].event, "ping");
  EXPECT_EQ(evs[0].data, "a\nb");
  EXPECT_EQ(evs[0].id, "7");
  EXPECT_TRUE(evs[0].has_data);
  EXPECT_EQ(evs[0].raw, "event: ping\ndata: a\ndata:b\nid: 7\n: comment\n\n");
}

TEST(SseParser, HandlesCrLfAndLoneCr) {
  auto evs = parse_chunks({"data: x\r\n\r\ndata: y\r\rdata: z\n\n"});
  ASSERT_EQ(evs.size(), 3u);
  EXPECT_EQ(evs[0].data, "x");
  EXPECT_EQ(evs[1].data, "y");
  EXPECT_EQ(evs[2].data, "z");
}

TEST(SseParser, CrAtChunkEndWaitsForLf) {
  auto evs = parse_chunks({"data: x\r", "\n\r", "\n"});
  ASSERT_EQ(evs.size(), 1u);
  EXPECT_EQ(evs[0].data, "x");
  EXPECT_EQ(evs[0].raw, "data: x\r\n\r\n");
}

TEST(SseParser, CommentOnlyBlockIsReportedWithoutData) {
  auto evs = parse_chunks({": keep-alive\n\ndata: 1\n\n"});
  ASSERT_EQ(evs.size(), 2u);
  EXPECT_FALSE(evs[0].has_data);
  EXPECT_EQ(evs[0].raw, ": keep-alive\n\n");
  EXPECT_EQ(evs[1].data, "1");
}

TEST(SseParser, SkipsBomAndStrayBlankLines) {
  auto evs = parse_chunks({"\xEF\xBB", "\xBF\n\ndata: 1\n\n\n\ndata: 2\n\n"});
  ASSERT_EQ(evs.size(), 2u);
  EXPECT_EQ(evs[0].data, "1");
  EXPECT_EQ(evs[1].data, "2");
}

TEST(SseParser, FinishDispatchesUnterminatedBlock) {
  auto evs = parse_chunks({"data: 1\n\ndata: partial"});
  ASSERT_EQ(evs.size(), 2u);
  EXPECT_EQ(evs[1].data, "partial");
  EXPECT_EQ(evs[1].raw, "data: partial");
}

TEST(SseParser, RejectsOversizedBlock) {
  SseParser p(64);
  p.feed(std::string(100, 'a'));
  SseEvent ev;
  EXPECT_EQ(p.next(ev), SseParser::Status::kTooLarge);
  p.feed("\n\n");
  EXPECT_EQ(p.next(ev), SseParser::Status::kTooLarge);
}

TEST(SseWriter, SplitsMultiLinePayloads) {
  std::string out;
  append_data_event(out, "{\"a\":1}");
  append_data_event(out, "x\ny");
  EXPECT_EQ(out, "data: {\"a\":1}\n\ndata: x\ndata: y\n\n");
  auto evs = parse_chunks({out});
  ASSERT_EQ(evs.size(), 2u);
  EXPECT_EQ(evs[1].data, "x\ny");
}

// Every real recorded stream, fed split at every byte position (and one byte at a time),
// must give exactly the events of a single whole feed, and the raw blocks must concatenate
// back to the input.
TEST(SseParser, RecordedStreamsAtEverySplitPoint) {
  int files = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(SLUICE_FIXTURES_DIR)) {
    if (entry.path().extension() != ".sse") {
      continue;
    }
    ++files;
    SCOPED_TRACE(entry.path().string());
    const std::string bytes = read_file(entry.path());
    const auto whole = parse_chunks({bytes});
    ASSERT_FALSE(whole.empty());
    std::string joined;
    for (const auto& e : whole) {
      joined += e.raw;
    }
    EXPECT_EQ(joined, bytes);
    // Every split point near the start and the end (where the framing edge cases are) and a
    // stride through the middle keep the cost linear in the corpus size.
    const std::size_t edge = 1024;
    const std::size_t stride = bytes.size() > 2 * edge ? (bytes.size() - 2 * edge) / 128 + 1 : 1;
    for (std::size_t split = 1; split < bytes.size();
         split += (split < edge || split + edge > bytes.size()) ? 1 : stride) {
      std::string_view v(bytes);
      auto parts = parse_chunks({v.substr(0, split), v.substr(split)});
      ASSERT_EQ(parts, whole) << "split at " << split;
    }
    std::vector<std::string_view> bytewise;
    for (std::size_t i = 0; i < bytes.size(); ++i) {
      bytewise.push_back(std::string_view(bytes).substr(i, 1));
    }
    ASSERT_EQ(parse_chunks(bytewise), whole);
  }
  EXPECT_GT(files, 3);
}

TEST(SseParser, OpenAiChatStreamEndsWithDone) {
  const auto bytes = read_file(std::filesystem::path(SLUICE_FIXTURES_DIR) / "openai-chat" /
                               "chat-stream-text-include-usage.sse");
  auto evs = parse_chunks({bytes});
  ASSERT_GE(evs.size(), 3u);
  EXPECT_EQ(evs.back().data, "[DONE]");
  EXPECT_NE(evs[evs.size() - 2].data.find("\"choices\":[]"), std::string::npos);
}

}  // namespace
}  // namespace sluice::codec

namespace sluice::codec {
namespace {

// Hostile input: random bytes biased towards SSE syntax, fed in random chunk sizes. The
// parser must never crash, never return a block larger than its limit, and (when not over
// the limit) hand back every byte exactly once across `raw` views.
TEST(SseParser, RandomInputInRandomChunks) {
  std::mt19937 rng(12345);
  const char alphabet[] = {'d', 'a', 't', ':', ' ',    '\n',   '\r',   'e',  'v', 'n',
                           'i', '{', '}', '"', '\xEF', '\xBB', '\xBF', '\0', 'x'};
  for (int round = 0; round < 300; ++round) {
    std::string input(rng() % 2048, '\0');
    for (char& c : input) {
      c = alphabet[rng() % sizeof(alphabet)];
    }
    const std::size_t limit = 64 + rng() % 1024;
    SseParser parser(limit);
    std::string seen;
    bool too_large = false;
    SseEvent ev;
    std::size_t pos = 0;
    while (pos < input.size() && !too_large) {
      const std::size_t n = std::min<std::size_t>(input.size() - pos, 1 + rng() % 64);
      parser.feed(std::string_view(input).substr(pos, n));
      pos += n;
      for (;;) {
        auto s = parser.next(ev);
        if (s == SseParser::Status::kTooLarge) {
          too_large = true;
          break;
        }
        if (s == SseParser::Status::kNeedMore) {
          break;
        }
        EXPECT_LE(ev.raw.size(), limit);
        seen.append(ev.raw);
      }
    }
    if (too_large) {
      continue;
    }
    while (parser.finish(ev) == SseParser::Status::kEvent) {
      seen.append(ev.raw);
    }
    // Stray blank lines between blocks are swallowed; everything else comes back in order.
    std::string expected = input;
    std::string got = seen;
    auto strip = [](std::string s) {
      std::string out;
      for (char c : s) {
        if (c != '\n' && c != '\r') {
          out.push_back(c);
        }
      }
      return out;
    };
    if (expected.starts_with("\xEF\xBB\xBF")) {
      expected.erase(0, 3);
    }
    ASSERT_EQ(strip(got), strip(expected)) << "round " << round;
  }
}

}  // namespace
}  // namespace sluice::codec
