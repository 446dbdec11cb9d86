#include "cache/entry_codec.h"

#include <cstdint>
#include <cstring>

#include <zlib.h>

namespace sluice::cache {
namespace {

using std::chrono::milliseconds;

// "SLC" and the layout's version: a record of another version is a miss, never misread.
constexpr std::string_view kMagic{"SLC1", 4};
constexpr std::uint8_t kDeflated = 1;

class Writer {
 public:
  explicit Writer(std::string& out) : out_(out) {}

  void byte(std::uint8_t b) { out_.push_back(static_cast<char>(b)); }
  void varint(std::uint64_t v) {
    while (v >= 0x80) {
      byte(static_cast<std::uint8_t>(v | 0x80));
      v >>= 7;
    }
    byte(static_cast<std::uint8_t>(v));
  }
  void signed_varint(std::int64_t v) {
    varint((static_cast<std::uint64_t>(v) << 1) ^ static_cast<std::uint64_t>(v >> 63));
  }
  void text(std::string_view s) {
    varint(s.size());
    out_.append(s);
  }
  void raw(const void* data, std::size_t n) { out_.append(static_cast<const char*>(data), n); }

 private:
  std::string& out_;
};

// Every read checks what is left; the first that fails fails the rest.
class Reader {
 public:
  explicit Reader(std::string_view in) : in_(in) {}

  bool ok() const { return ok_; }
  bool at_end() const { return ok_ && in_.empty(); }
  std::string_view rest() const { return in_; }

  std::uint8_t byte() {
    if (!ok_ || in_.empty()) {
      ok_ = false;
      return 0;
    }
    const auto b = static_cast<std::uint8_t>(in_.front());
    in_.remove_prefix(1);
    return b;
  }
  std::uint64_t varint() {
    std::uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      const std::uint8_t b = byte();
      v |= static_cast<std::uint64_t>(b & 0x7f) << shift;
      if ((b & 0x80) == 0) {
        return v;
      }
    }
    ok_ = false;
    return 0;
  }
  std::int64_t signed_varint() {
    const std::uint64_t v = varint();
    return static_cast<std::int64_t>((v >> 1) ^ (~(v & 1) + 1));
  }
  std::string text() {
    const std::uint64_t n = varint();
    if (!ok_ || n > in_.size()) {
      ok_ = false;
      return {};
    }
    std::string s(in_.substr(0, n));
    in_.remove_prefix(n);
    return s;
  }
  void raw(void* data, std::size_t n) {
    if (!ok_ || n > in_.size()) {
      ok_ = false;
      return;
    }
    std::memcpy(data, in_.data(), n);
    in_.remove_prefix(n);
  }

 private:
  std::string_view in_;
  bool ok_ = true;
};

std::int64_t wall_ms(std::chrono::system_clock::time_point t) {
  return std::chrono::duration_cast<milliseconds>(t.time_since_epoch()).count();
}

// A steady instant as the wall-clock instant it is on this machine, and back.
std::int64_t to_wall_ms(std::chrono::steady_clock::time_point t, const EntryClocks& now) {
  return wall_ms(now.wall_now) +
         std::chrono::duration_cast<milliseconds>(t - now.steady_now).count();
}
std::chrono::steady_clock::time_point to_steady(std::int64_t wall, const EntryClocks& now) {
  return now.steady_now + milliseconds(wall - wall_ms(now.wall_now));
}

bool storable(const ir::ContentPart& part) {
  switch (part.kind) {
    case ir::PartKind::kText:
    case ir::PartKind::kToolCall:
    case ir::PartKind::kReasoning:
    case ir::PartKind::kRedactedReasoning:
      return part.parts.empty();
    case ir::PartKind::kImage:
    case ir::PartKind::kToolResult:
      return false;
  }
  return false;
}

void write_payload(Writer& w, const Entry& entry, const EntryClocks& now) {
  w.text(entry.alias);
  w.text(entry.route);
  w.text(entry.tenant);
  w.text(entry.provider);
  w.text(entry.model);
  w.signed_varint(wall_ms(entry.stored_at));
  w.signed_varint(to_wall_ms(entry.fresh_until, now));
  w.signed_varint(to_wall_ms(entry.stale_until, now));
  w.raw(entry.request_digest.data(), entry.request_digest.size());
  const ir::Response& a = entry.answer;
  w.text(a.id);
  w.text(a.model);
  w.byte(static_cast<std::uint8_t>(a.finish));
  w.text(a.stop_sequence);
  w.signed_varint(a.created);
  w.byte(a.usage ? 1 : 0);
  if (a.usage) {
    w.varint(a.usage->input_tokens);
    w.varint(a.usage->output_tokens);
    w.varint(a.usage->cache_read_tokens);
    w.varint(a.usage->cache_write_tokens);
    w.varint(a.usage->reasoning_tokens);
  }
  w.varint(a.content.size());
  for (const ir::ContentPart& part : a.content) {
    w.byte(static_cast<std::uint8_t>(part.kind));
    w.text(part.text);
    w.text(part.id);
    w.text(part.name);
    w.text(part.arguments);
    w.text(part.signature);
  }
}

// A record's instants must lie within a century of the reader's clock: anything else is a
// corrupt record, and converting it to the clocks' nanoseconds would overflow.
constexpr std::int64_t kPlausibleMs = 100LL * 366 * 24 * 3600 * 1000;

bool plausible(std::int64_t wall, const EntryClocks& now) {
  const std::int64_t here = wall_ms(now.wall_now);
  return wall > here - kPlausibleMs && wall < here + kPlausibleMs;
}

std::optional<Entry> read_payload(Reader& r, const EntryClocks& now) {
  Entry entry;
  entry.alias = r.text();
  entry.route = r.text();
  entry.tenant = r.text();
  entry.provider = r.text();
  entry.model = r.text();
  const std::int64_t stored = r.signed_varint();
  const std::int64_t fresh = r.signed_varint();
  const std::int64_t stale = r.signed_varint();
  if (!plausible(stored, now) || !plausible(fresh, now) || !plausible(stale, now)) {
    return std::nullopt;
  }
  entry.stored_at = std::chrono::system_clock::time_point(milliseconds(stored));
  entry.fresh_until = to_steady(fresh, now);
  entry.stale_until = to_steady(stale, now);
  r.raw(entry.request_digest.data(), entry.request_digest.size());
  ir::Response& a = entry.answer;
  a.id = r.text();
  a.model = r.text();
  const std::uint8_t finish = r.byte();
  if (finish > static_cast<std::uint8_t>(ir::FinishReason::kOther)) {
    return std::nullopt;
  }
  a.finish = static_cast<ir::FinishReason>(finish);
  a.stop_sequence = r.text();
  a.created = r.signed_varint();
  if (r.byte() == 1) {
    ir::Usage u;
    u.input_tokens = r.varint();
    u.output_tokens = r.varint();
    u.cache_read_tokens = r.varint();
    u.cache_write_tokens = r.varint();
    u.reasoning_tokens = r.varint();
    a.usage = u;
  }
  const std::uint64_t parts = r.varint();
  for (std::uint64_t i = 0; r.ok() && i < parts; ++i) {
    ir::ContentPart part;
    const std::uint8_t kind = r.byte();
    if (kind > static_cast<std::uint8_t>(ir::PartKind::kRedactedReasoning)) {
      return std::nullopt;
    }
    part.kind = static_cast<ir::PartKind>(kind);
    part.text = r.text();
    part.id = r.text();
    part.name = r.text();
    part.arguments = r.text();
    part.signature = r.text();
    if (!storable(part)) {
      return std::nullopt;
    }
    a.content.push_back(std::move(part));
  }
  if (!r.at_end()) {
    return std::nullopt;  // cut short, or bytes this version did not write
  }
  entry.bytes = entry_bytes(entry);
  return entry;
}

}  // namespace

std::optional<std::string> encode_entry(const Entry& entry, const EntryClocks& now,
                                        std::size_t compress_above) {
  for (const ir::ContentPart& part : entry.answer.content) {
    if (!storable(part)) {
      return std::nullopt;
    }
  }
  std::string payload;
  payload.reserve(entry.bytes);
  Writer pw(payload);
  write_payload(pw, entry, now);

  std::string record(kMagic);
  Writer w(record);
  if (payload.size() <= compress_above) {
    w.byte(0);
    record += payload;
    return record;
  }
  uLongf size = compressBound(static_cast<uLong>(payload.size()));
  std::string deflated(size, '\0');
  // Level 1: most of a text answer's gain at a fraction of the CPU of the default level.
  if (compress2(reinterpret_cast<Bytef*>(deflated.data()), &size,
                reinterpret_cast<const Bytef*>(payload.data()), static_cast<uLong>(payload.size()),
                1) != Z_OK ||
      size >= payload.size()) {
    w.byte(0);
    record += payload;
    return record;
  }
  deflated.resize(size);
  w.byte(kDeflated);
  w.varint(payload.size());
  record += deflated;
  return record;
}

std::optional<Entry> decode_entry(std::string_view record, const EntryClocks& now,
                                  std::size_t max_bytes) {
  if (!record.starts_with(kMagic)) {
    return std::nullopt;
  }
  Reader header(record.substr(kMagic.size()));
  const std::uint8_t flags = header.byte();
  if (!header.ok() || (flags & ~kDeflated) != 0) {
    return std::nullopt;
  }
  std::string_view payload = record.substr(kMagic.size() + 1);
  std::string inflated;
  if ((flags & kDeflated) != 0) {
    Reader sized(payload);
    const std::uint64_t size = sized.varint();
    if (!sized.ok() || size == 0 || size > max_bytes) {
      return std::nullopt;
    }
    const std::string_view deflated = sized.rest();
    inflated.resize(size);
    uLongf out = static_cast<uLongf>(size);
    if (uncompress(reinterpret_cast<Bytef*>(inflated.data()), &out,
                   reinterpret_cast<const Bytef*>(deflated.data()),
                   static_cast<uLong>(deflated.size())) != Z_OK ||
        out != size) {
      return std::nullopt;
    }
    payload = inflated;
  } else if (payload.size() > max_bytes) {
    return std::nullopt;
  }
  Reader r(payload);
  return read_payload(r, now);
}

}  // namespace sluice::cache
