#include "cache/live_record.h"

#include "cache/record_bytes.h"

namespace sluice::cache {
namespace {

using record_bytes::Reader;
using record_bytes::Writer;

// "SLL" and the layout's version.
constexpr std::string_view kMagic{"SLL1", 4};

void write_origin(Writer& w, std::string_view provider, std::string_view model,
                  const std::optional<ir::Usage>& usage) {
  w.text(provider);
  w.text(model);
  w.usage(usage);
}

void write_event(Writer& w, const ir::StreamEvent& e) {
  w.byte(static_cast<std::uint8_t>(e.kind));
  w.varint(e.index);
  w.text(e.text);
  w.text(e.id);
  w.text(e.name);
  w.text(e.model);
  w.byte(static_cast<std::uint8_t>(e.finish));
  w.usage(e.kind == ir::StreamEventKind::kUsage ? std::optional<ir::Usage>(e.usage) : std::nullopt);
  if (e.kind == ir::StreamEventKind::kError) {
    w.byte(static_cast<std::uint8_t>(e.error.kind()));
    w.varint(static_cast<std::uint64_t>(e.error.http_status()));
    w.text(e.error.message());
    w.text(e.error.code());
  }
}

bool read_event(Reader& r, ir::StreamEvent& e) {
  const std::uint8_t kind = r.byte();
  if (kind > static_cast<std::uint8_t>(ir::StreamEventKind::kDone)) {
    return false;
  }
  e.kind = static_cast<ir::StreamEventKind>(kind);
  const std::uint64_t index = r.varint();
  if (index > UINT32_MAX) {
    return false;
  }
  e.index = static_cast<std::uint32_t>(index);
  e.text = r.text();
  e.id = r.text();
  e.name = r.text();
  e.model = r.text();
  const std::uint8_t finish = r.byte();
  if (finish > static_cast<std::uint8_t>(ir::FinishReason::kOther)) {
    return false;
  }
  e.finish = static_cast<ir::FinishReason>(finish);
  if (std::optional<ir::Usage> usage = r.usage()) {
    e.usage = *usage;
  }
  if (e.kind == ir::StreamEventKind::kError) {
    const std::uint8_t error_kind = r.byte();
    const std::uint64_t status = r.varint();
    std::string message = r.text();
    std::string code = r.text();
    if (error_kind > static_cast<std::uint8_t>(ErrorKind::kInternal) || status > 999) {
      return false;
    }
    e.error =
        Error(static_cast<ErrorKind>(error_kind), static_cast<int>(status), std::move(message))
            .with_code(std::move(code));
  }
  return r.ok();
}

}  // namespace

std::string encode_live_events(std::span<const ir::StreamEvent> events, std::string_view provider,
                               std::string_view model, const std::optional<ir::Usage>& usage) {
  std::string out(kMagic);
  Writer w(out);
  w.byte(static_cast<std::uint8_t>(LiveRecord::Kind::kEvents));
  write_origin(w, provider, model, usage);
  w.varint(events.size());
  for (const ir::StreamEvent& e : events) {
    write_event(w, e);
  }
  return out;
}

std::string encode_live_end(bool whole, std::string_view provider, std::string_view model,
                            const std::optional<ir::Usage>& usage) {
  std::string out(kMagic);
  Writer w(out);
  w.byte(static_cast<std::uint8_t>(LiveRecord::Kind::kEnd));
  write_origin(w, provider, model, usage);
  w.byte(whole ? 1 : 0);
  return out;
}

std::optional<LiveRecord> decode_live(std::string_view bytes, std::size_t max_bytes) {
  if (!bytes.starts_with(kMagic) || bytes.size() > max_bytes) {
    return std::nullopt;
  }
  Reader r(bytes.substr(kMagic.size()));
  LiveRecord record;
  const std::uint8_t kind = r.byte();
  if (kind > static_cast<std::uint8_t>(LiveRecord::Kind::kEnd)) {
    return std::nullopt;
  }
  record.kind = static_cast<LiveRecord::Kind>(kind);
  record.provider = r.text();
  record.model = r.text();
  record.usage = r.usage();
  if (record.kind == LiveRecord::Kind::kEnd) {
    const std::uint8_t whole = r.byte();
    if (whole > 1) {
      return std::nullopt;
    }
    record.whole = whole == 1;
  } else {
    const std::uint64_t count = r.varint();
    // An event takes at least eight bytes (its kind, index, four texts, finish and usage
    // flag): a count beyond what is left is a lie, refused before anything is allocated.
    if (!r.ok() || count > r.rest().size() / 8) {
      return std::nullopt;
    }
    record.events.resize(count);
    for (ir::StreamEvent& e : record.events) {
      if (!read_event(r, e)) {
        return std::nullopt;
      }
    }
  }
  if (!r.at_end()) {
    return std::nullopt;
  }
  return record;
}

}  // namespace sluice::cache
