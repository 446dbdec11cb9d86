// codec::EventStreamDecoder on arbitrary bytes cut into fuzzed chunks (fuzz_support.h
// SplitInput). Flag bit 0 makes the harness write correct CRCs into every message it can frame
// before decoding, so mutations reach the length and header checks instead of stopping at the
// prelude CRC; bits 1-4 pick the message size limit. Checks what eventstream.h promises: each
// message is the next bytes of the input, its total length within the limit, its payload and
// header block inside it where the prelude says; the header block walks to its end and the named
// fields agree with find(); pending_bytes() stays below the limit (or a prelude) while more
// input is awaited; errors are final; finish() reports kTruncated exactly when bytes are left;
// and neither the messages nor the error depend on the chunking.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <zlib.h>

#include "codec/eventstream.h"
#include "fuzz_support.h"

namespace {

using sluice::codec::EventStreamDecoder;
using sluice::codec::EventStreamError;
using sluice::codec::EventStreamHeader;
using sluice::codec::EventStreamMessage;
using sluice::fuzz::check;
using Status = EventStreamDecoder::Status;

std::uint32_t read_u32(const char* p) {
  const auto* u = reinterpret_cast<const unsigned char*>(p);
  return (std::uint32_t{u[0]} << 24) | (std::uint32_t{u[1]} << 16) | (std::uint32_t{u[2]} << 8) |
         std::uint32_t{u[3]};
}

void write_u32(char* p, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) {
    p[i] = static_cast<char>(v >> (24 - 8 * i));
  }
}

std::uint32_t crc(const char* p, std::size_t n) {
  return static_cast<std::uint32_t>(
      crc32(0L, reinterpret_cast<const Bytef*>(p), static_cast<uInt>(n)));
}

// Rewrites the prelude and message CRCs of each message the lengths frame, front to back.
void repair_crcs(std::string& bytes) {
  std::size_t at = 0;
  while (bytes.size() - at >= 12) {
    char* p = bytes.data() + at;
    write_u32(p + 8, crc(p, 8));
    const std::uint32_t total = read_u32(p);
    if (total < 16 || total > bytes.size() - at) {
      return;
    }
    write_u32(p + total - 4, crc(p, total - 4));
    at += total;
  }
}

std::size_t encoded_value_size(const EventStreamHeader& h) {
  using Type = EventStreamHeader::Type;
  switch (h.type) {
    case Type::kTrue:
    case Type::kFalse:
      check(h.bytes.empty(), "bool header with bytes");
      return 0;
    case Type::kByte:
      return 1;
    case Type::kShort:
      return 2;
    case Type::kInteger:
      return 4;
    case Type::kLong:
    case Type::kTimestamp:
      return 8;
    case Type::kByteArray:
    case Type::kString:
      check(h.bytes.data() == h.name.data() + h.name.size() + 3, "value bytes misplaced");
      return 2 + h.bytes.size();
    case Type::kUuid:
      check(h.bytes.size() == 16, "uuid not 16 bytes");
      return 16;
  }
  sluice::fuzz::fail("header with an unknown type");
}

struct Message {
  std::string raw, message_type, event_type, exception_type, content_type, payload;
  bool operator==(const Message&) const = default;
};

struct Outcome {
  std::vector<Message> messages;
  EventStreamError error = EventStreamError::kNone;
  bool operator==(const Outcome&) const = default;
};

void check_message(const EventStreamMessage& m, std::size_t limit) {
  check(m.raw.size() >= 16 && m.raw.size() <= limit, "message size outside [16, limit]");
  check(read_u32(m.raw.data()) == m.raw.size(), "raw size is not the prelude's total length");
  const std::size_t headers = read_u32(m.raw.data() + 4);
  check(m.headers.raw().size() == headers && m.headers.raw().data() == m.raw.data() + 12,
        "header block not where the prelude says");
  check(m.payload.data() == m.raw.data() + 12 + headers &&
            m.payload.size() == m.raw.size() - 16 - headers,
        "payload not where the prelude says");
  std::size_t walked = 0;  // the encoded sizes of the headers add up to the block
  for (const EventStreamHeader& h : m.headers) {
    check(h.name.data() == m.headers.raw().data() + walked + 1, "header not where the last ended");
    check(!h.name.empty(), "header with an empty name");
    walked += 2 + h.name.size() + encoded_value_size(h);
  }
  check(walked == headers, "headers do not fill the block");
  const struct {
    std::string_view name, field;
  } named[] = {{":message-type", m.message_type},     {":event-type", m.event_type},
               {":exception-type", m.exception_type}, {":content-type", m.content_type},
               {":error-code", m.error_code},         {":error-message", m.error_message}};
  for (const auto& n : named) {
    const auto found = m.headers.find(n.name);
    check(found ? found->bytes == n.field : n.field.empty(), "named field disagrees with find()",
          n.name);
  }
}

Outcome decode(const sluice::fuzz::SplitInput& in, std::string_view payload, bool chunked,
               std::size_t limit) {
  EventStreamDecoder decoder(limit);
  EventStreamMessage m;
  Outcome out;
  std::size_t consumed = 0;
  auto feed = [&](std::string_view chunk) {
    if (out.error != EventStreamError::kNone) {
      return;
    }
    // Each chunk in its own allocation, freed after the drain: ASan sees any view that outlives
    // the bytes it borrowed.
    const std::string copy(chunk);
    decoder.feed(copy);
    while (true) {
      switch (decoder.next(m)) {
        case Status::kMessage:
          check_message(m, limit);
          check(payload.substr(consumed).starts_with(m.raw),
                "message is not the next bytes of the input");
          consumed += m.raw.size();
          out.messages.push_back({std::string(m.raw), std::string(m.message_type),
                                  std::string(m.event_type), std::string(m.exception_type),
                                  std::string(m.content_type), std::string(m.payload)});
          continue;
        case Status::kNeedMore:
          check(decoder.pending_bytes() <= (limit > 11 ? limit : 11),
                "pending_bytes above the limit on kNeedMore");
          return;
        case Status::kError:
          out.error = decoder.error();
          check(out.error != EventStreamError::kNone, "kError without an error");
          check(decoder.next(m) == Status::kError, "error did not stick");
          return;
      }
    }
  };
  if (chunked) {
    std::size_t at = 0;
    in.for_each_chunk([&](std::string_view piece) {
      feed(payload.substr(at, piece.size()));
      at += piece.size();
    });
  } else {
    feed(payload);
  }
  if (out.error == EventStreamError::kNone) {
    check(consumed + decoder.pending_bytes() == payload.size(), "input bytes lost");
    const Status s = decoder.finish();
    check((s == Status::kError) == (consumed < payload.size()),
          "finish() disagrees with the bytes left");
    if (s == Status::kError) {
      check(decoder.error() == EventStreamError::kTruncated, "finish() error not kTruncated");
      out.error = EventStreamError::kTruncated;
    }
  }
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const sluice::fuzz::SplitInput in(data, size);
  std::string bytes(in.payload);
  if ((in.flags & 1) != 0) {
    repair_crcs(bytes);
  }
  // Small limits (64..960 bytes) exercise kTooLarge; 0 is the default of 1 MiB.
  const std::size_t limit = (in.flags >> 1) == 0 ? std::size_t{1} << 20 : (in.flags >> 1) * 64u;
  const Outcome chunked = decode(in, bytes, true, limit);
  const Outcome whole = decode(in, bytes, false, limit);
  check(chunked.error == whole.error, "error depends on the chunking");
  check(chunked.messages == whole.messages, "messages depend on the chunking");
  return 0;
}
