#include "guardrails/sse_events.h"

namespace sluice::guardrails {
namespace {

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

}  // namespace

std::size_t sse_event_end(std::string_view data, std::size_t from) {
  for (std::size_t i = from; i + 1 < data.size(); ++i) {
    if (data[i] != '\n') continue;
    if (data[i + 1] == '\n') return i + 2;
    if (data[i + 1] == '\r' && i + 2 < data.size() && data[i + 2] == '\n') return i + 3;
  }
  return std::string_view::npos;
}

bool repeats_deltas(std::string_view name) {
  return starts_with(name, "response.") && !name.ends_with(".delta");
}

SseEvent read_sse_event(std::string_view event, std::string* data) {
  SseEvent out;
  std::size_t at = 0;
  while (at < event.size()) {
    std::size_t eol = event.find('\n', at);
    if (eol == std::string_view::npos) eol = event.size();
    std::size_t end = eol;
    if (end > at && event[end - 1] == '\r') --end;
    const std::string_view line = event.substr(at, end - at);
    if (starts_with(line, "event:")) {
      std::string_view name = line.substr(6);
      while (!name.empty() && name.front() == ' ') name.remove_prefix(1);
      out.name = name;
    } else if (starts_with(line, "data:")) {
      std::size_t begin = at + 5;
      if (begin < end && event[begin] == ' ') ++begin;
      out.data_begin = begin;
      out.data_end = end;
      if (data != nullptr) {
        if (out.data_lines > 0) *data += '\n';
        data->append(event.substr(begin, end - begin));
      }
      ++out.data_lines;
    }
    at = eol + 1;
  }
  return out;
}

}  // namespace sluice::guardrails
