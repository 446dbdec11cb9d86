#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace sluice::codec {

// One header of an event stream message. Views point into the message's bytes (see
// EventStreamMessage for how long they live).
struct EventStreamHeader {
  // The value type byte on the wire (Smithy, "Amazon Event Stream Specification", Headers Format).
  enum class Type : std::uint8_t {
    kTrue = 0,
    kFalse = 1,
    kByte = 2,
    kShort = 3,
    kInteger = 4,
    kLong = 5,
    kByteArray = 6,
    kString = 7,
    kTimestamp = 8,  // milliseconds since the Unix epoch
    kUuid = 9,
  };

  std::string_view name;
  Type type = Type::kTrue;
  // kTrue 1, kFalse 0; kByte, kShort, kInteger, kLong sign-extended; kTimestamp the
  // milliseconds as a signed 64-bit integer. 0 for the other types.
  std::int64_t number = 0;
  // kByteArray and kString: the value bytes (no length prefix); kUuid: the 16 raw bytes.
  // Empty for the other types.
  std::string_view bytes;
};

// The header block of a message, already validated by the decoder: iterate it in wire order or
// look a header up by name. A view, cheap to copy; no allocation.
class EventStreamHeaders {
 public:
  class Iterator {
   public:
    using value_type = EventStreamHeader;
    using difference_type = std::ptrdiff_t;

    Iterator() = default;
    const EventStreamHeader& operator*() const { return current_; }
    const EventStreamHeader* operator->() const { return &current_; }
    Iterator& operator++();
    Iterator operator++(int) {
      Iterator old = *this;
      ++*this;
      return old;
    }
    bool operator==(const Iterator& other) const { return at_ == other.at_; }

   private:
    friend class EventStreamHeaders;
    Iterator(const char* at, const char* end);

    const char* at_ = nullptr;    // first byte of current_; end_ when past the last header
    const char* next_ = nullptr;  // first byte after current_
    const char* end_ = nullptr;
    EventStreamHeader current_;
  };

  EventStreamHeaders() = default;
  explicit EventStreamHeaders(std::string_view block) : block_(block) {}

  Iterator begin() const { return Iterator(block_.data(), block_.data() + block_.size()); }
  Iterator end() const {
    return Iterator(block_.data() + block_.size(), block_.data() + block_.size());
  }
  bool empty() const { return block_.empty(); }
  // The first header called `name` (names are case-sensitive), or nullopt. Linear in the block.
  std::optional<EventStreamHeader> find(std::string_view name) const;
  // The encoded block as received.
  std::string_view raw() const { return block_; }

 private:
  std::string_view block_;
};

// One decoded `application/vnd.amazon.eventstream` message. All views point into the bytes
// given to EventStreamDecoder::feed() or into the decoder's own buffer (when the message
// arrived split over several feeds); they stay valid until the next feed() or next() call, and
// while the fed bytes they point into are alive.
struct EventStreamMessage {
  // The headers every AWS event stream defines (Smithy, "Amazon Event Semantics"); empty when
  // absent. `:message-type` is "event", "exception" (a modeled error: `:exception-type` names
  // it, e.g. "throttlingException", and the payload is its JSON body) or "error" (an unmodeled
  // error, described by `:error-code` and `:error-message`).
  std::string_view message_type;
  std::string_view event_type;
  std::string_view exception_type;
  std::string_view content_type;
  std::string_view error_code;
  std::string_view error_message;
  EventStreamHeaders headers;  // all of them, the ones above included
  std::string_view payload;
  std::string_view raw;  // the whole message, prelude to message CRC, as received
};

// Why an event stream was refused. Every error is final for the stream.
enum class EventStreamError : std::uint8_t {
  kNone,
  kPreludeCrc,  // the CRC-32 of the first 8 bytes does not match
  kBadLength,   // total length below the 16 bytes of framing, or headers longer than the rest
  kTooLarge,    // total length above the decoder's max_message_bytes
  kMessageCrc,  // the CRC-32 of the message does not match
  kBadHeaders,  // a header overruns the block, has an empty name or an unknown value type, or
                // one of the named headers of EventStreamMessage is repeated or not a string
  kTruncated,   // finish() with part of a message still buffered
};

// A short English description of `error` ("event stream message CRC mismatch"), for logs.
std::string_view describe(EventStreamError error);

// Incremental decoder of the AWS event stream binary framing, `application/vnd.amazon.eventstream`
// (the response body of Bedrock ConverseStream and InvokeModelWithResponseStream). Sans-I/O,
// single-threaded: fed arbitrary chunks, yields complete messages, never throws.
//
// Wire format (Smithy, "Amazon Event Stream Specification"; all integers big-endian):
//   total_length u32 | headers_length u32 | prelude_crc u32 (CRC-32 of the 8 bytes before it)
//   headers[headers_length] | payload[total_length - headers_length - 16]
//   message_crc u32 (CRC-32 of every byte before it)
// where each header is name_length u8 | name | type u8 | value (by type; byte arrays and
// strings carry a u16 length). CRC-32 is the IEEE / zlib one.
//
// Both CRCs are checked (the spec says a client MUST) before anything they cover is used: the
// prelude CRC before the lengths, the message CRC before the headers. Upstream bytes are
// untrusted: a total length above `max_message_bytes` is refused as soon as the prelude is in,
// before any buffer of that size exists.
//
// Zero-copy: feed() borrows the bytes, and a message that lies whole inside one fed chunk is
// returned as views into it. Only the incomplete tail is copied, into a buffer the decoder keeps
// (and reuses) across messages. The fed bytes must therefore stay valid until next() returns
// kNeedMore or kError, or until the next feed(), whichever comes first.
class EventStreamDecoder {
 public:
  enum class Status { kMessage, kNeedMore, kError };

  // `max_message_bytes` bounds a whole message, framing included. The spec lets a service send
  // up to 24 MiB of payload and 128 KiB of headers (and tells clients not to enforce those);
  // Bedrock events are a few hundred bytes, so the default matches SseParser's.
  explicit EventStreamDecoder(std::size_t max_message_bytes = 1 << 20)
      : max_message_bytes_(max_message_bytes) {}

  // Makes `bytes` the next input (see the class comment for how long they must live). Call
  // next() until it returns kNeedMore before feeding again: bytes not yet consumed when feed()
  // is called are copied. Ignored after an error. Invalidates views from the previous message.
  void feed(std::string_view bytes);
  void feed(std::string&&) = delete;  // the bytes are borrowed: a temporary would dangle
  // Decodes the next complete message into `out`. kNeedMore when the input ends inside a
  // message (or between two); kError once the stream is refused, and from then on (error()
  // says why).
  Status next(EventStreamMessage& out);
  // End of input: kNeedMore when the stream ended between messages, kError (kTruncated) when
  // part of a message was left.
  Status finish();

  EventStreamError error() const { return error_; }
  // Bytes received but not yet returned in a message.
  std::size_t pending_bytes() const { return buffer_.size() - buffer_pos_ + input_.size(); }
  std::size_t buffer_capacity_for_test() const { return buffer_.capacity(); }

 private:
  Status fail(EventStreamError error);
  // The total length from a prelude at `p` (12 bytes), or 0 after fail().
  std::uint32_t check_prelude(const char* p);
  Status decode(std::string_view bytes, EventStreamMessage& out);
  // Moves up to `n` bytes from input_ to the end of buffer_.
  void take(std::size_t n);

  std::size_t max_message_bytes_;
  // Bytes of a message that arrived split (and, after a feed() without draining, any later
  // ones), from buffer_pos_. Cleared, capacity kept, once consumed.
  std::string buffer_;
  std::size_t buffer_pos_ = 0;
  std::uint32_t buffered_total_ = 0;  // length of the message at buffer_pos_; 0 until checked
  std::string_view input_;            // borrowed: the rest of the last feed()
  EventStreamError error_ = EventStreamError::kNone;
};

}  // namespace sluice::codec
