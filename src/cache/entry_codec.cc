#include "cache/entry_codec.h"

#include <cstdint>
#include <cstring>

#include <zlib.h>

#include "cache/record_bytes.h"

namespace sluice::cache {
namespace {

using record_bytes::Reader;
using record_bytes::Writer;

using std::chrono::milliseconds;

// "SLC" and the layout's version: a record of another version is a miss, never misread.
constexpr std::string_view kMagic{"SLC1", 4};
constexpr std::uint8_t kDeflated = 1;

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
  w.usage(a.usage);
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
  a.usage = r.usage();
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
