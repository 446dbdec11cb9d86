#include "codec/upstream_events.h"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <boost/json/parse.hpp>
#include <gtest/gtest.h>

#include "codec/base64.h"
#include "codec/eventstream_writer.h"

// The relay's one view of every upstream stream: SSE blocks as they are, and Bedrock's binary
// event stream as events named by their type, the payload as data.
namespace sluice::codec {
namespace {

using Status = UpstreamEvents::Status;

std::string read_fixture(const std::string& name) {
  std::ifstream in(std::filesystem::path(SLUICE_FIXTURES_DIR) / "bedrock" / name, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

struct Seen {
  std::string event;
  std::string data;
  std::string id;
};

// Feeds `bytes` in pieces of `piece` bytes (each kept alive until drained, as the relay does).
std::vector<Seen> read_all(UpstreamEvents& events, const std::string& bytes, std::size_t piece,
                           Status& last) {
  std::vector<Seen> seen;
  SseEvent e;
  for (std::size_t at = 0; at < bytes.size(); at += piece) {
    const std::string chunk = bytes.substr(at, piece);
    events.feed(chunk);
    while ((last = events.next(e)) == Status::kEvent) {
      seen.push_back({std::string(e.event), std::string(e.data), std::string(e.id)});
    }
    if (last != Status::kNeedMore) {
      return seen;
    }
  }
  while ((last = events.finish(e)) == Status::kEvent) {
    seen.push_back({std::string(e.event), std::string(e.data), std::string(e.id)});
  }
  return seen;
}

TEST(UpstreamEventsTest, TheFramingIsTheResponsesMediaType) {
  using Framing = UpstreamEvents::Framing;
  EXPECT_EQ(UpstreamEvents::framing_of("application/vnd.amazon.eventstream"),
            Framing::kEventStream);
  EXPECT_EQ(UpstreamEvents::framing_of(" Application/VND.Amazon.EventStream ; charset=x"),
            Framing::kEventStream);
  EXPECT_EQ(UpstreamEvents::framing_of("text/event-stream"), Framing::kSse);
  EXPECT_EQ(UpstreamEvents::framing_of(""), Framing::kSse);
}

TEST(UpstreamEventsTest, SseBlocksPassAsTheyAre) {
  UpstreamEvents events(1 << 20);
  Status last = Status::kNeedMore;
  const std::vector<Seen> seen =
      read_all(events, "event: a\ndata: {\"x\":1}\n\ndata: [DONE]", 5, last);
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[0].event, "a");
  EXPECT_EQ(seen[0].data, "{\"x\":1}");
  EXPECT_EQ(seen[1].data, "[DONE]") << "a last block without its blank line still counts";
  EXPECT_EQ(last, Status::kNeedMore);
}

TEST(UpstreamEventsTest, ABedrockStreamIsItsMessagesNamedByEventTypeAtAnySplit) {
  const std::string bytes = read_fixture("converse-stream-tool-use.eventstream.bin");
  const boost::json::array expected =
      boost::json::parse(read_fixture("converse-stream-tool-use.events.json")).as_array();
  for (const std::size_t piece : {std::size_t{1}, std::size_t{7}, std::size_t{100}, bytes.size()}) {
    UpstreamEvents events(1 << 20);
    events.set_framing(UpstreamEvents::Framing::kEventStream);
    Status last = Status::kNeedMore;
    const std::vector<Seen> seen = read_all(events, bytes, piece, last);
    EXPECT_EQ(last, Status::kNeedMore) << piece;
    ASSERT_EQ(seen.size(), expected.size()) << piece;
    for (std::size_t i = 0; i < seen.size(); ++i) {
      const boost::json::object& message = expected[i].as_object();
      EXPECT_EQ(seen[i].event, message.at("headers").at(":event-type").as_string().c_str());
      EXPECT_EQ(boost::json::parse(seen[i].data), message.at("payload")) << i;
    }
  }
}

TEST(UpstreamEventsTest, AnExceptionIsNamedByItsTypeAndAnUnmodeledErrorIsError) {
  std::string bytes;
  append_event_stream_event("messageStart", R"({"role":"assistant"})", bytes);
  append_event_stream_exception("throttlingException", R"({"message":"slow down"})", bytes);
  const std::array<EventStreamStringHeader, 3> error{{{":message-type", "error"},
                                                      {":error-code", "InternalFailure"},
                                                      {":error-message", "it broke"}}};
  append_event_stream_message(error, "", bytes);
  UpstreamEvents events(1 << 20);
  events.set_framing(UpstreamEvents::Framing::kEventStream);
  Status last = Status::kNeedMore;
  const std::vector<Seen> seen = read_all(events, bytes, 3, last);
  ASSERT_EQ(seen.size(), 3u);
  EXPECT_EQ(seen[0].event, "messageStart");
  EXPECT_EQ(seen[1].event, "throttlingException");
  EXPECT_EQ(seen[1].data, R"({"message":"slow down"})");
  EXPECT_EQ(seen[2].event, "error");
  EXPECT_EQ(seen[2].data, "it broke");
  EXPECT_EQ(seen[2].id, "InternalFailure");
}

TEST(UpstreamEventsTest, AnInvokeChunkIsTheModelsOwnEventAsAnSseBlock) {
  // InvokeModelWithResponseStream: {"bytes":"<base64 of the Messages API event>"}.
  const std::string start = R"({"type":"message_start","message":{"id":"msg_1"}})";
  const std::string delta = R"({"type":"content_block_delta","delta":{"text":"hi"}})";
  std::string bytes;
  append_event_stream_event("chunk", R"({"bytes":")" + base64(start) + R"("})", bytes);
  append_event_stream_event("chunk", R"({"p":"abc","bytes":")" + base64(delta) + R"("})", bytes);
  for (const std::size_t piece : {bytes.size(), std::size_t{7}, std::size_t{1}}) {
    UpstreamEvents events(1 << 20);
    events.set_framing(UpstreamEvents::Framing::kEventStream);
    std::vector<std::string> raws;
    SseEvent e;
    Status last = Status::kNeedMore;
    std::vector<Seen> seen;
    for (std::size_t at = 0; at < bytes.size(); at += piece) {
      const std::string chunk = bytes.substr(at, piece);
      events.feed(chunk);
      while ((last = events.next(e)) == Status::kEvent) {
        seen.push_back({std::string(e.event), std::string(e.data), std::string(e.id)});
        raws.emplace_back(e.raw);
      }
    }
    ASSERT_EQ(seen.size(), 2u) << piece;
    EXPECT_EQ(seen[0].event, "message_start");
    EXPECT_EQ(seen[0].data, start);
    EXPECT_EQ(raws[0], "event: message_start\ndata: " + start + "\n\n");
    EXPECT_EQ(seen[1].event, "content_block_delta");
    EXPECT_EQ(raws[1], "event: content_block_delta\ndata: " + delta + "\n\n");
  }

  std::string broken;
  append_event_stream_event("chunk", R"({"bytes":"not base64!"})", broken);
  UpstreamEvents events(1 << 20);
  events.set_framing(UpstreamEvents::Framing::kEventStream);
  events.feed(broken);
  SseEvent e;
  EXPECT_EQ(events.next(e), Status::kMalformed);
  EXPECT_EQ(events.malformed(), "a chunk whose bytes are not base64");
}

TEST(UpstreamEventsTest, BrokenOrCutFramingIsMalformedAndAnOversizedMessageTooLarge) {
  std::string bytes;
  append_event_stream_event("messageStart", R"({"role":"assistant"})", bytes);
  {
    std::string flipped = bytes;
    flipped[flipped.size() - 6] ^= 0x01;  // a payload byte: the message CRC no longer matches
    UpstreamEvents events(1 << 20);
    events.set_framing(UpstreamEvents::Framing::kEventStream);
    Status last = Status::kNeedMore;
    EXPECT_TRUE(read_all(events, flipped, flipped.size(), last).empty());
    EXPECT_EQ(last, Status::kMalformed);
    EXPECT_FALSE(events.malformed().empty());
  }
  {
    UpstreamEvents events(1 << 20);
    events.set_framing(UpstreamEvents::Framing::kEventStream);
    Status last = Status::kNeedMore;
    EXPECT_TRUE(read_all(events, bytes.substr(0, bytes.size() - 1), 1000, last).empty());
    EXPECT_EQ(last, Status::kMalformed) << "the body ended inside a message";
  }
  {
    UpstreamEvents events(16);
    events.set_framing(UpstreamEvents::Framing::kEventStream);
    Status last = Status::kNeedMore;
    EXPECT_TRUE(read_all(events, bytes, bytes.size(), last).empty());
    EXPECT_EQ(last, Status::kTooLarge);
  }
}

}  // namespace
}  // namespace sluice::codec
