#include "fixture.h"

#include <filesystem>
#include <fstream>
#include <system_error>

namespace sluice::mock {
namespace {

std::optional<std::string> read_regular_file(const std::filesystem::path& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    return std::nullopt;
  }
  auto size = std::filesystem::file_size(path, ec);
  if (ec || size > kMaxFixtureBytes) {
    return std::nullopt;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return std::nullopt;
  }
  std::string content(size, '\0');
  in.read(content.data(), static_cast<std::streamsize>(size));
  content.resize(static_cast<std::size_t>(in.gcount()));
  return content;
}

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

class FixtureStream final : public EventSource {
 public:
  explicit FixtureStream(std::string content)
      : content_(std::move(content)), events_(split_sse_events(content_)) {}

  bool next(std::string& out, EventKind& kind) override {
    if (next_ >= events_.size()) {
      return false;
    }
    auto [offset, length] = events_[next_++];
    out.append(content_, offset, length);
    kind = EventKind::kCounted;
    return true;
  }

 private:
  std::string content_;
  std::vector<std::pair<std::size_t, std::size_t>> events_;
  std::size_t next_ = 0;
};

}  // namespace

bool is_safe_fixture_name(std::string_view name) {
  return !name.empty() && name.find_first_of(std::string_view("/\\\0", 3)) == name.npos &&
         name.find("..") == name.npos;
}

std::optional<Fixture> load_fixture(const std::string& dir, std::string_view name) {
  if (dir.empty() || !is_safe_fixture_name(name)) {
    return std::nullopt;
  }
  const std::string base(name);
  for (const std::string& candidate : {base, base + ".sse", base + ".json"}) {
    if (auto content = read_regular_file(std::filesystem::path(dir) / candidate)) {
      Fixture f;
      f.kind = ends_with(candidate, ".sse") ? FixtureKind::kSse : FixtureKind::kBody;
      f.content = std::move(*content);
      return f;
    }
  }
  return std::nullopt;
}

std::vector<std::pair<std::size_t, std::size_t>> split_sse_events(std::string_view text) {
  std::vector<std::pair<std::size_t, std::size_t>> events;
  std::size_t event_start = 0;
  bool has_content = false;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t eol = text.find_first_of("\r\n", pos);
    if (eol == text.npos) {
      has_content = true;
      break;
    }
    std::size_t next = eol + 1;
    if (text[eol] == '\r' && next < text.size() && text[next] == '\n') {
      ++next;
    }
    bool blank = eol == pos;
    if (!blank) {
      has_content = true;
    } else if (has_content) {
      events.emplace_back(event_start, next - event_start);
      event_start = next;
      has_content = false;
    }
    pos = next;
  }
  if (event_start < text.size()) {
    if (has_content || events.empty()) {
      events.emplace_back(event_start, text.size() - event_start);
    } else {
      events.back().second += text.size() - event_start;
    }
  }
  return events;
}

std::unique_ptr<EventSource> make_fixture_stream(std::string content) {
  return std::make_unique<FixtureStream>(std::move(content));
}

}  // namespace sluice::mock
