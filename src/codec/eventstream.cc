#include "codec/eventstream.h"

#include <iterator>

#include <zlib.h>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace sluice::codec {

namespace {

// 4 bytes of total length, 4 of headers length, 4 of prelude CRC; 4 of message CRC at the end.
constexpr std::size_t kPreludeBytes = 12;
constexpr std::size_t kFramingBytes = kPreludeBytes + 4;

// The headers EventStreamMessage has a field for, in the order of its fields.
constexpr std::string_view kNamedHeaders[] = {":message-type", ":event-type", ":exception-type",
                                              ":content-type", ":error-code", ":error-message"};

std::uint16_t read_u16(const char* p) {
  const auto* u = reinterpret_cast<const unsigned char*>(p);
  return static_cast<std::uint16_t>((u[0] << 8) | u[1]);
}

std::uint32_t read_u32(const char* p) {
  const auto* u = reinterpret_cast<const unsigned char*>(p);
  return (std::uint32_t{u[0]} << 24) | (std::uint32_t{u[1]} << 16) | (std::uint32_t{u[2]} << 8) |
         std::uint32_t{u[3]};
}

std::uint64_t read_u64(const char* p) {
  return (std::uint64_t{read_u32(p)} << 32) | read_u32(p + 4);
}

#if defined(__x86_64__)
__attribute__((target("sse4.1,pclmul"))) inline __m128i load(const unsigned char* at) {
  return _mm_loadu_si128(reinterpret_cast<const __m128i*>(at));
}

// One fold step: the lane times k (its low and high halves), plus the next 16 bytes.
__attribute__((target("sse4.1,pclmul"))) inline __m128i fold(__m128i lane, __m128i k,
                                                             __m128i next) {
  return _mm_xor_si128(
      _mm_xor_si128(_mm_clmulepi64_si128(lane, k, 0x00), _mm_clmulepi64_si128(lane, k, 0x11)),
      next);
}

// CRC-32 by carry-less multiplication (Gopal et al., "Fast CRC Computation for Generic
// Polynomials Using PCLMULQDQ Instruction", Intel, 2009): four 128-bit lanes folded 64 bytes at a
// time, then folded to one lane, to 64 bits and Barrett-reduced. The constants are the powers of
// x modulo the bit-reflected IEEE polynomial that the paper derives. `state` and the result are
// the raw (not complemented) CRC register; `n` is a multiple of 16, at least 64.
__attribute__((target("sse4.1,pclmul"))) std::uint32_t fold_crc32(const unsigned char* p,
                                                                  std::size_t n,
                                                                  std::uint32_t state) {
  alignas(16) static constexpr std::uint64_t kFold4[2] = {0x0154442bd4, 0x01c6e41596};
  alignas(16) static constexpr std::uint64_t kFold1[2] = {0x01751997d0, 0x00ccaa009e};
  alignas(16) static constexpr std::uint64_t kFold64[2] = {0x0163cd6124, 0};
  alignas(16) static constexpr std::uint64_t kBarrett[2] = {0x01db710641, 0x01f7011641};
  __m128i a = _mm_xor_si128(load(p), _mm_cvtsi32_si128(static_cast<int>(state)));
  __m128i b = load(p + 16);
  __m128i c = load(p + 32);
  __m128i d = load(p + 48);
  p += 64;
  n -= 64;
  __m128i k = _mm_load_si128(reinterpret_cast<const __m128i*>(kFold4));
  for (; n >= 64; p += 64, n -= 64) {
    a = fold(a, k, load(p));
    b = fold(b, k, load(p + 16));
    c = fold(c, k, load(p + 32));
    d = fold(d, k, load(p + 48));
  }
  k = _mm_load_si128(reinterpret_cast<const __m128i*>(kFold1));
  a = fold(a, k, b);
  a = fold(a, k, c);
  a = fold(a, k, d);
  for (; n >= 16; p += 16, n -= 16) {
    a = fold(a, k, load(p));
  }
  // 128 bits to 64, then Barrett reduction to 32.
  const __m128i low32 = _mm_setr_epi32(~0, 0, ~0, 0);
  a = _mm_xor_si128(_mm_srli_si128(a, 8), _mm_clmulepi64_si128(a, k, 0x10));
  k = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(kFold64));
  a = _mm_xor_si128(_mm_clmulepi64_si128(_mm_and_si128(a, low32), k, 0x00), _mm_srli_si128(a, 4));
  k = _mm_load_si128(reinterpret_cast<const __m128i*>(kBarrett));
  __m128i t = _mm_clmulepi64_si128(_mm_and_si128(a, low32), k, 0x10);
  t = _mm_clmulepi64_si128(_mm_and_si128(t, low32), k, 0x00);
  return static_cast<std::uint32_t>(_mm_extract_epi32(_mm_xor_si128(a, t), 1));
}

bool have_clmul() {
  __builtin_cpu_init();  // this runs from a static initializer, maybe before libgcc's own
  return __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse4.1");
}

const bool kHaveClmul = have_clmul();
#endif

// CRC-32 (IEEE, as zlib's crc32()). zlib's table-driven loop ran at about 0.9 GB/s on the
// benchmark machine, 95% of the decode time of a 200-byte Bedrock event; folding with
// carry-less multiplication is about 5 times faster there. zlib does the rest of the bytes.
std::uint32_t crc32_of(const char* data, std::size_t n) {
  const auto* p = reinterpret_cast<const unsigned char*>(data);
  std::uint32_t crc = 0;
#if defined(__x86_64__)
  if (kHaveClmul && n >= 64) {
    const std::size_t folded = n & ~std::size_t{15};
    crc = ~fold_crc32(p, folded, ~std::uint32_t{0});
    p += folded;
    n -= folded;
  }
#endif
  // n is below 2^32: the decoder's lengths come from u32 fields.
  return static_cast<std::uint32_t>(crc32(crc, p, static_cast<uInt>(n)));
}

// Decodes the header at `p` into `out` and returns the byte after it, or nullptr when it does
// not fit before `end`, has an empty name (the spec says names MUST be at least one byte) or an
// unknown type (the spec says the set is not open to extension).
const char* read_header(const char* p, const char* end, EventStreamHeader& out) {
  using Type = EventStreamHeader::Type;
  const std::size_t name_size = static_cast<unsigned char>(*p++);
  if (name_size == 0 || static_cast<std::size_t>(end - p) < name_size + 1) {
    return nullptr;
  }
  out.name = std::string_view(p, name_size);
  p += name_size;
  const auto type = static_cast<unsigned char>(*p++);
  const auto left = static_cast<std::size_t>(end - p);
  out.type = static_cast<Type>(type);
  out.number = 0;
  out.bytes = {};
  switch (out.type) {
    case Type::kTrue:
      out.number = 1;
      return p;
    case Type::kFalse:
      return p;
    case Type::kByte:
      if (left < 1) {
        return nullptr;
      }
      out.number = static_cast<std::int8_t>(*p);
      return p + 1;
    case Type::kShort:
      if (left < 2) {
        return nullptr;
      }
      out.number = static_cast<std::int16_t>(read_u16(p));
      return p + 2;
    case Type::kInteger:
      if (left < 4) {
        return nullptr;
      }
      out.number = static_cast<std::int32_t>(read_u32(p));
      return p + 4;
    case Type::kLong:
    case Type::kTimestamp:
      if (left < 8) {
        return nullptr;
      }
      out.number = static_cast<std::int64_t>(read_u64(p));
      return p + 8;
    case Type::kByteArray:
    case Type::kString: {
      if (left < 2) {
        return nullptr;
      }
      const std::size_t size = read_u16(p);
      if (left - 2 < size) {
        return nullptr;
      }
      out.bytes = std::string_view(p + 2, size);
      return p + 2 + size;
    }
    case Type::kUuid:
      if (left < 16) {
        return nullptr;
      }
      out.bytes = std::string_view(p, 16);
      return p + 16;
  }
  return nullptr;
}

}  // namespace

EventStreamHeaders::Iterator::Iterator(const char* at, const char* end)
    : at_(at), next_(at), end_(end) {
  ++*this;
}

EventStreamHeaders::Iterator& EventStreamHeaders::Iterator::operator++() {
  at_ = next_;
  if (at_ != end_) {
    next_ = read_header(at_, end_, current_);
    if (next_ == nullptr) {
      at_ = next_ = end_;  // not a block the decoder validated: stop rather than overrun
    }
  }
  return *this;
}

std::optional<EventStreamHeader> EventStreamHeaders::find(std::string_view name) const {
  for (const EventStreamHeader& h : *this) {
    if (h.name == name) {
      return h;
    }
  }
  return std::nullopt;
}

std::string_view describe(EventStreamError error) {
  switch (error) {
    case EventStreamError::kNone:
      return "no error";
    case EventStreamError::kPreludeCrc:
      return "event stream prelude CRC mismatch";
    case EventStreamError::kBadLength:
      return "event stream message lengths are inconsistent";
    case EventStreamError::kTooLarge:
      return "event stream message larger than the limit";
    case EventStreamError::kMessageCrc:
      return "event stream message CRC mismatch";
    case EventStreamError::kBadHeaders:
      return "malformed event stream headers";
    case EventStreamError::kTruncated:
      return "event stream ended inside a message";
  }
  return "unknown event stream error";
}

void EventStreamDecoder::feed(std::string_view bytes) {
  if (error_ != EventStreamError::kNone) {
    return;
  }
  if (buffer_pos_ == buffer_.size()) {
    buffer_.clear();
  } else if (buffer_pos_ > 0) {
    buffer_.erase(0, buffer_pos_);
  }
  buffer_pos_ = 0;
  buffer_.append(input_);  // the caller fed again without draining: these bytes are not borrowed
  input_ = bytes;
}

EventStreamDecoder::Status EventStreamDecoder::next(EventStreamMessage& out) {
  if (error_ != EventStreamError::kNone) {
    return Status::kError;
  }
  if (buffer_pos_ == buffer_.size()) {
    buffer_.clear();  // the previous message, if it was buffered, is released now
    buffer_pos_ = 0;
    if (input_.size() >= kPreludeBytes) {
      const std::uint32_t total = check_prelude(input_.data());
      if (total == 0) {
        return Status::kError;
      }
      if (input_.size() >= total) {
        const std::string_view message = input_.substr(0, total);
        input_.remove_prefix(total);
        return decode(message, out);
      }
      buffer_.reserve(total);  // within max_message_bytes_: check_prelude said so
      buffered_total_ = total;
    }
    buffer_.append(input_);
    input_ = {};
    return Status::kNeedMore;
  }
  std::size_t have = buffer_.size() - buffer_pos_;
  if (buffered_total_ == 0) {
    if (have < kPreludeBytes) {
      take(kPreludeBytes - have);
      have = buffer_.size() - buffer_pos_;
      if (have < kPreludeBytes) {
        return Status::kNeedMore;
      }
    }
    buffered_total_ = check_prelude(buffer_.data() + buffer_pos_);
    if (buffered_total_ == 0) {
      return Status::kError;
    }
  }
  const std::size_t total = buffered_total_;
  if (have < total) {
    take(total - have);
    if (buffer_.size() - buffer_pos_ < total) {
      return Status::kNeedMore;
    }
  }
  const std::string_view message = std::string_view(buffer_).substr(buffer_pos_, total);
  buffer_pos_ += total;
  buffered_total_ = 0;
  return decode(message, out);
}

EventStreamDecoder::Status EventStreamDecoder::finish() {
  if (error_ != EventStreamError::kNone) {
    return Status::kError;
  }
  if (pending_bytes() > 0) {
    return fail(EventStreamError::kTruncated);
  }
  return Status::kNeedMore;
}

EventStreamDecoder::Status EventStreamDecoder::fail(EventStreamError error) {
  error_ = error;
  input_ = {};
  return Status::kError;
}

std::uint32_t EventStreamDecoder::check_prelude(const char* p) {
  // The prelude has its own CRC so that a corrupt length is caught before it is used to size a
  // buffer or to wait for bytes that will never come.
  if (crc32_of(p, 8) != read_u32(p + 8)) {
    fail(EventStreamError::kPreludeCrc);
    return 0;
  }
  const std::uint32_t total = read_u32(p);
  const std::uint32_t headers = read_u32(p + 4);
  if (total < kFramingBytes || headers > total - kFramingBytes) {
    fail(EventStreamError::kBadLength);
    return 0;
  }
  if (total > max_message_bytes_) {
    fail(EventStreamError::kTooLarge);
    return 0;
  }
  return total;
}

EventStreamDecoder::Status EventStreamDecoder::decode(std::string_view message,
                                                      EventStreamMessage& out) {
  const char* p = message.data();
  const std::size_t total = message.size();
  if (crc32_of(p, total - 4) != read_u32(p + total - 4)) {
    return fail(EventStreamError::kMessageCrc);
  }
  const std::size_t headers_size = read_u32(p + 4);
  const char* at = p + kPreludeBytes;
  const char* const end = at + headers_size;
  out = EventStreamMessage{};
  out.headers = EventStreamHeaders(std::string_view(at, headers_size));
  out.payload = std::string_view(end, total - kFramingBytes - headers_size);
  out.raw = message;
  // The spec allows a header name once per message: a repeated named header is refused rather
  // than letting this decoder and an SDK downstream each pick a different one.
  std::string_view* const fields[] = {&out.message_type, &out.event_type, &out.exception_type,
                                      &out.content_type, &out.error_code, &out.error_message};
  unsigned seen = 0;
  EventStreamHeader h;
  while (at != end) {
    at = read_header(at, end, h);
    if (at == nullptr) {
      return fail(EventStreamError::kBadHeaders);
    }
    if (h.name.size() < 2 || h.name[0] != ':') {
      continue;
    }
    for (unsigned i = 0; i < std::size(kNamedHeaders); ++i) {
      if (h.name != kNamedHeaders[i]) {
        continue;
      }
      if ((seen & (1u << i)) != 0 || h.type != EventStreamHeader::Type::kString) {
        return fail(EventStreamError::kBadHeaders);
      }
      seen |= 1u << i;
      *fields[i] = h.bytes;
      break;
    }
  }
  return Status::kMessage;
}

void EventStreamDecoder::take(std::size_t n) {
  const std::size_t k = n < input_.size() ? n : input_.size();
  buffer_.append(input_.data(), k);
  input_.remove_prefix(k);
}

}  // namespace sluice::codec
