#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace sluice::guardrails {

// Where the SSE event that starts at `from` ends (after its blank line), or npos. The stream
// filters get whole events (pipeline/filter.h); the last one of a stream may lack its blank line.
std::size_t sse_event_end(std::string_view data, std::size_t from);

// One SSE event's `event:` name ("" for none) and its data: where the payload of its data line
// lies, when it has exactly one (the encoders of every protocol write one).
struct SseEvent {
  std::string_view name;
  std::size_t data_begin = 0;
  std::size_t data_end = 0;
  int data_lines = 0;
};
// With `data`: every data line's payload is also appended to it, joined by '\n' (an event may
// spread its data over several lines).
SseEvent read_sse_event(std::string_view event, std::string* data = nullptr);

// Whether an event of this name repeats text earlier events carried as deltas: a Responses
// stream's *.done events and response.completed (its deltas are *.delta).
bool repeats_deltas(std::string_view event_name);

}  // namespace sluice::guardrails
