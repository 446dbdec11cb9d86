#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "event_source.h"

namespace sluice::mock {

enum class FixtureKind : std::uint8_t {
  kSse,   // *.sse: replayed as a chunked text/event-stream, event by event
  kBody,  // anything else: sent as one application/json body
};

struct Fixture {
  FixtureKind kind = FixtureKind::kBody;
  std::string content;
};

// Largest fixture file the mock will load.
inline constexpr std::size_t kMaxFixtureBytes = 64u << 20;

// A name is safe when it is non-empty and has no '/', '\\', NUL or "..", so it cannot
// leave the fixtures directory.
bool is_safe_fixture_name(std::string_view name);

// Reads `dir`/`name`, or failing that `name`.sse then `name`.json. nullopt when the name is
// unsafe, `dir` is empty, or no such regular file exists (or it is over kMaxFixtureBytes).
// Blocking file I/O: fixtures are small and test-only.
std::optional<Fixture> load_fixture(const std::string& dir, std::string_view name);

// Splits SSE text into events, each ending with (and including) the blank line that ends
// it; "\n", "\r\n" and "\r" line ends are all recognised. Blank lines before an event
// belong to it; trailing text with no blank line is a final event. The pieces concatenate
// back to `text`. Returned (offset, length) pairs index into `text`.
std::vector<std::pair<std::size_t, std::size_t>> split_sse_events(std::string_view text);

// Replays `content` event by event, every event kCounted.
std::unique_ptr<EventSource> make_fixture_stream(std::string content);

}  // namespace sluice::mock
