#pragma once

#include <algorithm>
#include <cstddef>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>

#include "codec/sse.h"

// Helpers shared by the codec tests: reading the recorded fixture corpus (tests/fixtures/,
// passed in as SLUICE_FIXTURES_DIR) and replaying SSE bytes at every split point.
namespace sluice::test {

// The whole file, byte for byte; "" when it cannot be read.
inline std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// tests/fixtures/<corpus>/, e.g. fixture_dir("openai-chat").
inline std::filesystem::path fixture_dir(std::string_view corpus) {
  return std::filesystem::path(SLUICE_FIXTURES_DIR) / corpus;
}

// tests/fixtures/<corpus>/<name>, read whole.
inline std::string read_fixture(std::string_view corpus, std::string_view name) {
  return read_file(fixture_dir(corpus) / name);
}

// Feeds `bytes` to a codec::SseParser `step` bytes at a time (0 = all at once), then ends the
// input, calling on_event(const codec::SseEvent&) for each block in order. The event's views
// are valid only during the call.
template <typename OnEvent>
void for_each_sse_event(std::string_view bytes, std::size_t step, OnEvent&& on_event) {
  codec::SseParser parser;
  codec::SseEvent ev;
  if (step == 0) {
    step = std::max<std::size_t>(bytes.size(), 1);
  }
  for (std::size_t pos = 0; pos < bytes.size(); pos += step) {
    parser.feed(bytes.substr(pos, step));
    while (parser.next(ev) == codec::SseParser::Status::kEvent) {
      on_event(ev);
    }
  }
  if (parser.finish(ev) == codec::SseParser::Status::kEvent) {
    on_event(ev);
  }
}

}  // namespace sluice::test
