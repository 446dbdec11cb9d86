#pragma once

#include <span>
#include <string>
#include <string_view>

namespace sluice::codec {

// A string header of an event stream message (the only type AWS's own event headers use).
struct EventStreamStringHeader {
  std::string_view name;   // at most 255 bytes
  std::string_view value;  // at most 65,535 bytes
};

// Appends one `application/vnd.amazon.eventstream` message (codec/eventstream.h has the layout)
// with `headers` (string-typed, in this order) and `payload` to `out`: the prelude and its
// CRC-32, the headers, the payload and the message CRC-32. For the mock upstream's Bedrock
// streams and for tests; names and values past their length limits are cut to them.
void append_event_stream_message(std::span<const EventStreamStringHeader> headers,
                                 std::string_view payload, std::string& out);

// An event of an AWS stream: `:event-type` `event_type`, `:content-type` application/json,
// `:message-type` event.
void append_event_stream_event(std::string_view event_type, std::string_view json,
                               std::string& out);
// A modeled exception: `:exception-type` `type` ("throttlingException"), `:message-type`
// exception, the payload its JSON body ({"message":"..."}).
void append_event_stream_exception(std::string_view type, std::string_view json, std::string& out);

}  // namespace sluice::codec
