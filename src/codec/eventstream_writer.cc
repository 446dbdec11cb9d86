#include "codec/eventstream_writer.h"

#include <algorithm>
#include <array>
#include <cstdint>

#include <zlib.h>

namespace sluice::codec {
namespace {

constexpr std::uint8_t kStringType = 7;

void append_u32(std::string& out, std::uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8) {
    out.push_back(static_cast<char>((v >> shift) & 0xff));
  }
}

std::uint32_t crc_of(std::string_view bytes, std::uint32_t crc = 0) {
  return static_cast<std::uint32_t>(
      crc32(crc, reinterpret_cast<const Bytef*>(bytes.data()), static_cast<uInt>(bytes.size())));
}

}  // namespace

void append_event_stream_message(std::span<const EventStreamStringHeader> headers,
                                 std::string_view payload, std::string& out) {
  std::size_t headers_length = 0;
  for (const EventStreamStringHeader& h : headers) {
    headers_length += 1 + std::min<std::size_t>(h.name.size(), 255) + 1 + 2 +
                      std::min<std::size_t>(h.value.size(), 65535);
  }
  const std::size_t start = out.size();
  append_u32(out, static_cast<std::uint32_t>(12 + headers_length + payload.size() + 4));
  append_u32(out, static_cast<std::uint32_t>(headers_length));
  append_u32(out, crc_of(std::string_view(out).substr(start, 8)));
  for (const EventStreamStringHeader& h : headers) {
    const std::string_view name = h.name.substr(0, 255);
    const std::string_view value = h.value.substr(0, 65535);
    out.push_back(static_cast<char>(name.size()));
    out.append(name);
    out.push_back(static_cast<char>(kStringType));
    out.push_back(static_cast<char>((value.size() >> 8) & 0xff));
    out.push_back(static_cast<char>(value.size() & 0xff));
    out.append(value);
  }
  out.append(payload);
  append_u32(out, crc_of(std::string_view(out).substr(start)));
}

void append_event_stream_event(std::string_view event_type, std::string_view json,
                               std::string& out) {
  const std::array<EventStreamStringHeader, 3> headers{{{":event-type", event_type},
                                                        {":content-type", "application/json"},
                                                        {":message-type", "event"}}};
  append_event_stream_message(headers, json, out);
}

void append_event_stream_exception(std::string_view type, std::string_view json, std::string& out) {
  const std::array<EventStreamStringHeader, 3> headers{{{":exception-type", type},
                                                        {":content-type", "application/json"},
                                                        {":message-type", "exception"}}};
  append_event_stream_message(headers, json, out);
}

}  // namespace sluice::codec
