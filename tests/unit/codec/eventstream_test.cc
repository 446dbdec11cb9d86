#include "codec/eventstream.h"

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>
#include <gtest/gtest.h>
#include <zlib.h>

namespace sluice::codec {
namespace {

using Status = EventStreamDecoder::Status;
using Type = EventStreamHeader::Type;

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::filesystem::path fixture(const std::string& name) {
  return std::filesystem::path(SLUICE_FIXTURES_DIR) / "bedrock" / name;
}

// --- An encoder for hand-built messages (big-endian integers, zlib's CRC-32). ---

std::string be(std::uint64_t v, int bytes) {
  std::string out;
  for (int i = bytes - 1; i >= 0; --i) {
    out.push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
  }
  return out;
}

std::uint32_t crc(std::string_view bytes) {
  return static_cast<std::uint32_t>(
      crc32(0L, reinterpret_cast<const Bytef*>(bytes.data()), static_cast<uInt>(bytes.size())));
}

// One header: name length, name, type, then `value` as already encoded for that type.
std::string header(std::string_view name, Type type, std::string_view value = {}) {
  std::string out = be(name.size(), 1);
  out += name;
  out.push_back(static_cast<char>(type));
  out += value;
  return out;
}

std::string string_header(std::string_view name, std::string_view value) {
  return header(name, Type::kString, be(value.size(), 2) + std::string(value));
}

// Frames a header block and a payload; `headers_length` overrides the true block size.
std::string frame(std::string_view headers, std::string_view payload,
                  std::int64_t headers_length = -1) {
  const std::size_t total = 16 + headers.size() + payload.size();
  std::string out = be(total, 4) + be(headers_length < 0 ? headers.size() : headers_length, 4);
  out += be(crc(out), 4);
  out += headers;
  out += payload;
  out += be(crc(out), 4);
  return out;
}

// A prelude alone, with a correct CRC.
std::string prelude(std::uint32_t total, std::uint32_t headers_length) {
  std::string out = be(total, 4) + be(headers_length, 4);
  return out + be(crc(out), 4);
}

std::string event(std::string_view type, std::string_view payload) {
  return frame(string_header(":event-type", type) +
                   string_header(":content-type", "application/json") +
                   string_header(":message-type", "event"),
               payload);
}

// --- Decoding helpers. ---

struct Decoded {
  std::string raw, message_type, event_type, content_type, payload, headers;
  bool operator==(const Decoded&) const = default;
};

struct Outcome {
  std::vector<Decoded> messages;
  EventStreamError error = EventStreamError::kNone;
  std::size_t pending = 0;
};

// Feeds `bytes` cut at `cuts` (increasing offsets), each piece in its own short-lived string as
// a network read would be, and drains after every feed.
Outcome decode(std::string_view bytes, const std::vector<std::size_t>& cuts = {},
               std::size_t max = 1 << 20) {
  EventStreamDecoder decoder(max);
  EventStreamMessage msg;
  Outcome run;
  std::size_t from = 0;
  for (std::size_t i = 0; i <= cuts.size(); ++i) {
    const std::size_t to = i < cuts.size() ? cuts[i] : bytes.size();
    const std::string chunk(bytes.substr(from, to - from));
    from = to;
    decoder.feed(chunk);
    Status s;
    while ((s = decoder.next(msg)) == Status::kMessage) {
      run.messages.push_back({std::string(msg.raw), std::string(msg.message_type),
                              std::string(msg.event_type), std::string(msg.content_type),
                              std::string(msg.payload), std::string(msg.headers.raw())});
    }
    if (s == Status::kError) {
      run.error = decoder.error();
      break;
    }
  }
  run.pending = decoder.pending_bytes();
  return run;
}

Outcome decode_in_chunks_of(std::string_view bytes, std::size_t size) {
  std::vector<std::size_t> cuts;
  for (std::size_t at = size; at < bytes.size(); at += size) {
    cuts.push_back(at);
  }
  return decode(bytes, cuts);
}

const char* const kStreams[] = {"converse-stream-text", "converse-stream-tool-use",
                                "converse-stream-reasoning", "converse-stream-claude-text"};

// --- Recorded streams. ---

TEST(EventStreamDecoder, FixturesDecodeToTheirListedEvents) {
  for (const char* name : kStreams) {
    SCOPED_TRACE(name);
    const std::string bytes = read_file(fixture(std::string(name) + ".eventstream.bin"));
    const boost::json::value expected =
        boost::json::parse(read_file(fixture(std::string(name) + ".events.json")));
    ASSERT_FALSE(bytes.empty());
    const boost::json::array& events = expected.as_array();

    EventStreamDecoder decoder;
    EventStreamMessage msg;
    decoder.feed(bytes);
    std::size_t n = 0;
    Status s;
    while ((s = decoder.next(msg)) == Status::kMessage) {
      ASSERT_LT(n, events.size());
      const boost::json::object& want = events[n++].as_object();
      EXPECT_EQ(msg.raw.size(), want.at("total_length").to_number<std::size_t>());
      EXPECT_EQ(msg.headers.raw().size(), want.at("headers_length").to_number<std::size_t>());
      // Headers in wire order, all strings, as the listing has them.
      const boost::json::object& want_headers = want.at("headers").as_object();
      auto it = want_headers.begin();
      for (const EventStreamHeader& h : msg.headers) {
        ASSERT_NE(it, want_headers.end());
        EXPECT_EQ(h.name, std::string_view(it->key()));
        EXPECT_EQ(h.type, Type::kString);
        EXPECT_EQ(h.bytes, std::string_view(it->value().as_string()));
        ++it;
      }
      EXPECT_EQ(it, want_headers.end());
      EXPECT_EQ(msg.event_type, std::string_view(want_headers.at(":event-type").as_string()));
      EXPECT_EQ(msg.message_type, "event");
      EXPECT_EQ(msg.content_type, "application/json");
      EXPECT_TRUE(msg.exception_type.empty());
      EXPECT_EQ(boost::json::parse(msg.payload), want.at("payload"));
      // Zero-copy: one feed held the whole stream, so the views point into it.
      EXPECT_GE(msg.raw.data(), bytes.data());
      EXPECT_LE(msg.raw.data() + msg.raw.size(), bytes.data() + bytes.size());
    }
    EXPECT_EQ(s, Status::kNeedMore);
    EXPECT_EQ(n, events.size());
    EXPECT_EQ(decoder.pending_bytes(), 0u);
    EXPECT_LE(decoder.buffer_capacity_for_test(), std::string().capacity());  // nothing copied
    EXPECT_EQ(decoder.finish(), Status::kNeedMore);
  }
}

TEST(EventStreamDecoder, EverySplitPointAndChunkSizeDecodesTheSame) {
  for (const char* name : kStreams) {
    SCOPED_TRACE(name);
    const std::string bytes = read_file(fixture(std::string(name) + ".eventstream.bin"));
    const Outcome whole = decode(bytes);
    ASSERT_EQ(whole.error, EventStreamError::kNone);
    ASSERT_FALSE(whole.messages.empty());
    for (std::size_t at = 0; at <= bytes.size(); ++at) {
      const Outcome split = decode(bytes, {at});
      ASSERT_EQ(split.error, EventStreamError::kNone) << "split at " << at;
      ASSERT_EQ(split.messages, whole.messages) << "split at " << at;
      ASSERT_EQ(split.pending, 0u);
    }
    for (std::size_t size = 1; size <= bytes.size(); ++size) {
      const Outcome chunked = decode_in_chunks_of(bytes, size);
      ASSERT_EQ(chunked.error, EventStreamError::kNone) << "chunks of " << size;
      ASSERT_EQ(chunked.messages, whole.messages) << "chunks of " << size;
    }
  }
}

TEST(EventStreamDecoder, TruncatedInputIsNeedMoreNotAnError) {
  const std::string bytes = read_file(fixture("converse-stream-claude-text.eventstream.bin"));
  const Outcome whole = decode(bytes);
  for (std::size_t n = 0; n < bytes.size(); ++n) {
    const Outcome cut = decode(std::string_view(bytes).substr(0, n));
    ASSERT_EQ(cut.error, EventStreamError::kNone) << "prefix " << n;
    std::size_t complete = 0;
    for (const Decoded& d : cut.messages) {
      complete += d.raw.size();
    }
    ASSERT_LT(cut.messages.size(), whole.messages.size());
    ASSERT_EQ(cut.pending, n - complete);
  }
  EventStreamDecoder decoder;
  EventStreamMessage msg;
  decoder.feed(std::string_view(bytes).substr(0, 100));
  EXPECT_EQ(decoder.next(msg), Status::kNeedMore);
  EXPECT_EQ(decoder.finish(), Status::kError);
  EXPECT_EQ(decoder.error(), EventStreamError::kTruncated);
}

TEST(EventStreamDecoder, FeedingAgainWithoutDrainingKeepsEveryByte) {
  const std::string bytes = read_file(fixture("converse-stream-text.eventstream.bin"));
  const Outcome whole = decode(bytes);
  EventStreamDecoder decoder;
  EventStreamMessage msg;
  std::vector<std::string> got;
  std::string first(bytes.substr(0, 1000)), second(bytes.substr(1000, 3000));
  decoder.feed(first);
  ASSERT_EQ(decoder.next(msg), Status::kMessage);  // one message, then feed again at once
  got.emplace_back(msg.raw);
  decoder.feed(second);
  first.assign(first.size(), '\0');  // the undrained bytes were copied, not borrowed
  decoder.feed(std::string_view(bytes).substr(4000));
  second.assign(second.size(), '\0');
  while (decoder.next(msg) == Status::kMessage) {
    got.emplace_back(msg.raw);
  }
  ASSERT_EQ(got.size(), whole.messages.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i], whole.messages[i].raw);
  }
  EXPECT_EQ(decoder.pending_bytes(), 0u);
}

// --- Integrity checks. ---

TEST(EventStreamDecoder, AFlippedBitFailsTheCrcThatCoversIt) {
  const std::string stream = read_file(fixture("converse-stream-claude-text.eventstream.bin"));
  const Outcome whole = decode(stream);
  const std::string message = whole.messages.at(0).raw;
  const std::size_t headers_end = 12 + whole.messages[0].headers.size();
  const std::size_t payload_end = message.size() - 4;
  for (std::size_t byte = 0; byte < message.size(); ++byte) {
    for (int bit = 0; bit < 8; ++bit) {
      std::string bad = message;
      bad[byte] = static_cast<char>(bad[byte] ^ (1 << bit));
      const Outcome run = decode(bad + stream.substr(message.size()));
      const EventStreamError want =
          byte < 12 ? EventStreamError::kPreludeCrc : EventStreamError::kMessageCrc;
      ASSERT_EQ(run.error, want) << "byte " << byte << " bit " << bit
                                 << (byte < 12            ? " (prelude)"
                                     : byte < headers_end ? " (headers)"
                                     : byte < payload_end ? " (payload)"
                                                          : " (message CRC)");
      ASSERT_TRUE(run.messages.empty());
    }
  }
}

TEST(EventStreamDecoder, ACorruptPreludeFailsBeforeTheRestArrives) {
  std::string bad = event("messageStart", "{}").substr(0, 12);
  bad[1] = static_cast<char>(bad[1] ^ 0x40);  // total length now ~4 MiB
  EventStreamDecoder decoder;
  EventStreamMessage msg;
  decoder.feed(bad);
  EXPECT_EQ(decoder.next(msg), Status::kError);
  EXPECT_EQ(decoder.error(), EventStreamError::kPreludeCrc);
}

TEST(EventStreamDecoder, OversizedLengthIsRefusedBeforeAnyAllocationOfThatSize) {
  for (std::uint32_t total :
       {std::uint32_t{1025}, std::uint32_t{1} << 30, std::numeric_limits<std::uint32_t>::max()}) {
    SCOPED_TRACE(total);
    const std::string p = prelude(total, 0);
    EventStreamDecoder decoder(1024);
    EventStreamMessage msg;
    decoder.feed(std::string_view(p).substr(0, 5));
    EXPECT_EQ(decoder.next(msg), Status::kNeedMore);
    decoder.feed(std::string_view(p).substr(5));
    EXPECT_EQ(decoder.next(msg), Status::kError);
    EXPECT_EQ(decoder.error(), EventStreamError::kTooLarge);
    EXPECT_LT(decoder.buffer_capacity_for_test(), 1024u);
  }
  // Exactly at the limit is fine.
  const std::string ok = frame("", std::string(1024 - 16, 'x'));
  EXPECT_EQ(decode(ok, {}, 1024).messages.size(), 1u);
  EXPECT_EQ(decode(ok, {}, 1023).error, EventStreamError::kTooLarge);
}

// The decoder's CRC-32 (folded with carry-less multiplication where the CPU has it) against
// zlib's, over every message size up to 600 bytes and every alignment of the fed buffer.
TEST(EventStreamDecoder, CrcMatchesZlibForEveryLengthAndAlignment) {
  std::string stream;
  for (std::size_t size = 0; size <= 600 - 16; ++size) {
    std::string payload(size, '\0');
    for (std::size_t i = 0; i < size; ++i) {
      payload[i] = static_cast<char>((i * 131 + size * 7) & 0xFF);
    }
    stream += frame("", payload);
  }
  for (std::size_t shift = 0; shift < 16; ++shift) {
    const std::string shifted = std::string(shift, 'x') + stream;
    const std::string_view bytes = std::string_view(shifted).substr(shift);
    EventStreamDecoder decoder;
    EventStreamMessage msg;
    decoder.feed(bytes);
    std::size_t n = 0;
    while (decoder.next(msg) == Status::kMessage) {
      ASSERT_EQ(msg.payload.size(), n++);
    }
    EXPECT_EQ(decoder.error(), EventStreamError::kNone) << "shift " << shift;
    EXPECT_EQ(n, 600u - 16 + 1);
  }
}

TEST(EventStreamDecoder, InconsistentLengthsAreRefused) {
  EXPECT_EQ(decode(prelude(15, 0)).error, EventStreamError::kBadLength);
  EXPECT_EQ(decode(prelude(0, 0)).error, EventStreamError::kBadLength);
  EXPECT_EQ(decode(prelude(16, 1)).error, EventStreamError::kBadLength);
  EXPECT_EQ(decode(prelude(100, 85)).error, EventStreamError::kBadLength);
  EXPECT_EQ(decode(prelude(100, 0xFFFFFFFF)).error, EventStreamError::kBadLength);
  // The smallest message: no headers, no payload.
  const Outcome empty = decode(frame("", ""));
  ASSERT_EQ(empty.error, EventStreamError::kNone);
  ASSERT_EQ(empty.messages.size(), 1u);
  EXPECT_EQ(empty.messages[0].raw.size(), 16u);
  EXPECT_TRUE(empty.messages[0].payload.empty());
}

TEST(EventStreamDecoder, MalformedHeadersAreRefused) {
  const std::string ev = string_header(":event-type", "messageStart");
  const struct {
    const char* what;
    std::string block;
  } cases[] = {
      {"string longer than the block", header(":event-type", Type::kString, be(100, 2) + "abc")},
      {"name longer than the block", be(50, 1) + "abcd"},
      {"no type byte", be(4, 1) + "name"},
      {"unknown type", header("x", static_cast<Type>(10))},
      {"empty name", header("", Type::kTrue)},
      {"int cut short", header("n", Type::kInteger, be(1, 2))},
      {"long cut short", header("n", Type::kLong, be(1, 7))},
      {"uuid cut short", header("n", Type::kUuid, std::string(15, 'u'))},
      {"string length cut short", header("n", Type::kString, be(0, 1))},
      {"repeated :event-type", ev + ev},
      {"repeated :message-type",
       string_header(":message-type", "event") + string_header(":message-type", "exception")},
      {":event-type not a string", header(":event-type", Type::kInteger, be(7, 4))},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.what);
    EXPECT_EQ(decode(frame(c.block, "{}")).error, EventStreamError::kBadHeaders);
  }
  // headers_length ending in the middle of a header (the rest counted as payload).
  const std::string block = ev + string_header(":content-type", "application/json");
  EXPECT_EQ(decode(frame(block, "{}", static_cast<std::int64_t>(ev.size() + 3))).error,
            EventStreamError::kBadHeaders);
}

TEST(EventStreamDecoder, ErrorsAreFinal) {
  const std::string good = event("messageStart", "{}");
  std::string bad = good;
  bad[20] ^= 1;
  EventStreamDecoder decoder;
  EventStreamMessage msg;
  const std::string bytes = good + bad + good;
  decoder.feed(bytes);
  EXPECT_EQ(decoder.next(msg), Status::kMessage);
  EXPECT_EQ(decoder.next(msg), Status::kError);
  EXPECT_EQ(decoder.error(), EventStreamError::kMessageCrc);
  EXPECT_EQ(decoder.next(msg), Status::kError);
  decoder.feed(good);
  EXPECT_EQ(decoder.next(msg), Status::kError);
  EXPECT_EQ(decoder.finish(), Status::kError);
  EXPECT_EQ(decoder.error(), EventStreamError::kMessageCrc);
  EXPECT_EQ(describe(decoder.error()), "event stream message CRC mismatch");
}

// --- Message kinds and header types. ---

TEST(EventStreamDecoder, DecodesAModeledException) {
  const std::string payload =
      R"({"message":"Too many requests, please wait before trying again."})";
  const std::string bytes = event("messageStart", R"({"role":"assistant"})") +
                            frame(string_header(":exception-type", "throttlingException") +
                                      string_header(":content-type", "application/json") +
                                      string_header(":message-type", "exception"),
                                  payload);
  EventStreamDecoder decoder;
  EventStreamMessage msg;
  decoder.feed(bytes);
  ASSERT_EQ(decoder.next(msg), Status::kMessage);
  EXPECT_EQ(msg.message_type, "event");
  ASSERT_EQ(decoder.next(msg), Status::kMessage);
  EXPECT_EQ(msg.message_type, "exception");
  EXPECT_EQ(msg.exception_type, "throttlingException");
  EXPECT_EQ(msg.content_type, "application/json");
  EXPECT_TRUE(msg.event_type.empty());
  EXPECT_EQ(msg.payload, payload);
  EXPECT_EQ(boost::json::parse(msg.payload).at("message").as_string(),
            "Too many requests, please wait before trying again.");
  EXPECT_EQ(decoder.next(msg), Status::kNeedMore);
}

TEST(EventStreamDecoder, DecodesAnUnmodeledError) {
  EventStreamDecoder decoder;
  EventStreamMessage msg;
  const std::string bytes = frame(string_header(":message-type", "error") +
                                      string_header(":error-code", "InternalError") +
                                      string_header(":error-message", "An internal error."),
                                  "");
  decoder.feed(bytes);
  ASSERT_EQ(decoder.next(msg), Status::kMessage);
  EXPECT_EQ(msg.message_type, "error");
  EXPECT_EQ(msg.error_code, "InternalError");
  EXPECT_EQ(msg.error_message, "An internal error.");
  EXPECT_TRUE(msg.payload.empty());
}

TEST(EventStreamDecoder, ParsesEveryHeaderValueType) {
  const std::string uuid("\x00\x11\x22\x33\x44\x55\x66\x77\x88\x99\xaa\xbb\xcc\xdd\xee\xff", 16);
  const std::string block =
      header("t", Type::kTrue) + header("f", Type::kFalse) + header("b", Type::kByte, "\xfb") +
      header("s", Type::kShort, be(0xFFFE, 2)) + header("i", Type::kInteger, be(0x7FFFFFFF, 4)) +
      header("ineg", Type::kInteger, be(0xFFFFFFFF, 4)) +
      header("l", Type::kLong, be(0x8000000000000000ULL, 8)) +
      header("a", Type::kByteArray, be(3, 2) + std::string("\x00\x01\xff", 3)) +
      header("empty", Type::kString, be(0, 2)) + string_header(":event-type", "chunk") +
      header("ts", Type::kTimestamp, be(1700000000123, 8)) + header("u", Type::kUuid, uuid);
  const std::string bytes = frame(block, "payload");
  EventStreamDecoder decoder;
  EventStreamMessage msg;
  decoder.feed(bytes);
  ASSERT_EQ(decoder.next(msg), Status::kMessage);
  EXPECT_EQ(msg.event_type, "chunk");
  EXPECT_EQ(msg.payload, "payload");

  struct Want {
    std::string_view name;
    Type type;
    std::int64_t number;
    std::string bytes;
  };
  const Want want[] = {
      {"t", Type::kTrue, 1, ""},
      {"f", Type::kFalse, 0, ""},
      {"b", Type::kByte, -5, ""},
      {"s", Type::kShort, -2, ""},
      {"i", Type::kInteger, 0x7FFFFFFF, ""},
      {"ineg", Type::kInteger, -1, ""},
      {"l", Type::kLong, std::numeric_limits<std::int64_t>::min(), ""},
      {"a", Type::kByteArray, 0, std::string("\x00\x01\xff", 3)},
      {"empty", Type::kString, 0, ""},
      {":event-type", Type::kString, 0, "chunk"},
      {"ts", Type::kTimestamp, 1700000000123, ""},
      {"u", Type::kUuid, 0, uuid},
  };
  std::size_t n = 0;
  for (const EventStreamHeader& h : msg.headers) {
    ASSERT_LT(n, std::size(want));
    const Want& w = want[n++];
    EXPECT_EQ(h.name, w.name);
    EXPECT_EQ(h.type, w.type) << w.name;
    EXPECT_EQ(h.number, w.number) << w.name;
    EXPECT_EQ(h.bytes, w.bytes) << w.name;
    const std::optional<EventStreamHeader> found = msg.headers.find(w.name);
    ASSERT_TRUE(found.has_value()) << w.name;
    EXPECT_EQ(found->type, w.type);
    EXPECT_EQ(found->bytes, w.bytes);
  }
  EXPECT_EQ(n, std::size(want));
  EXPECT_FALSE(msg.headers.find("missing").has_value());
  EXPECT_FALSE(msg.headers.find("T").has_value());  // names are case-sensitive
  EXPECT_TRUE(EventStreamHeaders().begin() == EventStreamHeaders().end());
}

TEST(EventStreamDecoder, ReusesItsBufferAcrossSplitMessages) {
  const std::string message = event("contentBlockDelta", std::string(200, 'x'));
  EventStreamDecoder decoder;
  EventStreamMessage msg;
  std::size_t capacity = 0;
  for (int i = 0; i < 50; ++i) {
    decoder.feed(std::string_view(message).substr(0, 100));
    ASSERT_EQ(decoder.next(msg), Status::kNeedMore);
    decoder.feed(std::string_view(message).substr(100));
    ASSERT_EQ(decoder.next(msg), Status::kMessage);
    ASSERT_EQ(msg.raw, message);
    ASSERT_EQ(decoder.next(msg), Status::kNeedMore);
    if (i == 0) {
      capacity = decoder.buffer_capacity_for_test();
    }
    ASSERT_EQ(decoder.buffer_capacity_for_test(), capacity);
  }
  EXPECT_GE(capacity, message.size());
}

}  // namespace
}  // namespace sluice::codec
