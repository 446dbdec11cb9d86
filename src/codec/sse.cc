#include "codec/sse.h"

#include <cstdint>
#include <cstring>

namespace sluice::codec {

namespace {

// The position of the first CR or LF in [from, size), or size. Eight bytes at a time (a word
// with neither byte is skipped whole), then byte by byte: linear whatever the line endings.
std::size_t line_end(const char* p, std::size_t from, std::size_t size) {
  constexpr std::uint64_t kOnes = 0x0101010101010101ULL;
  constexpr std::uint64_t kHigh = 0x8080808080808080ULL;
  std::size_t i = from;
  for (; i + 8 <= size; i += 8) {
    std::uint64_t w = 0;
    std::memcpy(&w, p + i, 8);
    const std::uint64_t lf = w ^ (kOnes * '\n');
    const std::uint64_t cr = w ^ (kOnes * '\r');
    // A zero byte in lf or cr is an LF or a CR in w.
    if ((((lf - kOnes) & ~lf) | ((cr - kOnes) & ~cr)) & kHigh) {
      break;
    }
  }
  while (i < size && p[i] != '\n' && p[i] != '\r') {
    ++i;
  }
  return i;
}

}  // namespace

void SseParser::feed(std::string_view bytes) {
  // Drop the bytes of blocks already returned before growing the buffer.
  if (block_start_ > 0) {
    buffer_.erase(0, block_start_);
    scan_ -= block_start_;
    line_start_ -= block_start_;
    block_start_ = 0;
  }
  buffer_.append(bytes);
}

SseParser::Status SseParser::next(SseEvent& out) { return parse(out, false); }

SseParser::Status SseParser::finish(SseEvent& out) {
  Status s = parse(out, true);
  if (s != Status::kNeedMore) {
    return s;
  }
  if (block_start_ < buffer_.size()) {
    if (line_start_ < buffer_.size()) {
      process_line(std::string_view(buffer_).substr(line_start_));
    }
    fill(out, buffer_.size());
    block_start_ = scan_ = line_start_ = buffer_.size();
    return Status::kEvent;
  }
  return Status::kNeedMore;
}

SseParser::Status SseParser::parse(SseEvent& out, bool at_eof) {
  if (too_large_) {
    return Status::kTooLarge;
  }
  if (!bom_checked_) {
    if (buffer_.size() < 3 && !at_eof && std::string_view("\xEF\xBB\xBF").starts_with(buffer_)) {
      return Status::kNeedMore;
    }
    bom_checked_ = true;
    if (std::string_view(buffer_).starts_with("\xEF\xBB\xBF")) {
      block_start_ = scan_ = line_start_ = 3;
    }
  }
  const std::size_t size = buffer_.size();
  while (scan_ < size) {
    const char* base = buffer_.data();
    const std::size_t i = line_end(base, scan_, size);
    if (i == size) {
      scan_ = size;
      break;
    }
    std::size_t line_end = i;
    std::size_t next_line = i + 1;
    if (base[i] == '\r') {
      if (i + 1 == size && !at_eof) {
        scan_ = i;  // wait: an LF may follow in the next chunk
        break;
      }
      if (i + 1 < size && base[i + 1] == '\n') {
        next_line = i + 2;
      }
    }
    std::string_view line(base + line_start_, line_end - line_start_);
    scan_ = line_start_ = next_line;
    if (line.empty()) {
      if (next_line - block_start_ == (next_line - line_end) && !has_data_ && event_.empty() &&
          id_.empty()) {
        // A blank line with nothing before it: not a block. Swallow it.
        block_start_ = next_line;
        continue;
      }
      if (next_line - block_start_ > max_event_bytes_) {
        too_large_ = true;  // completed within one feed, but still over the limit
        return Status::kTooLarge;
      }
      fill(out, next_line);
      block_start_ = next_line;
      return Status::kEvent;
    }
    process_line(line);
  }
  if (size - block_start_ > max_event_bytes_) {
    too_large_ = true;
    return Status::kTooLarge;
  }
  return Status::kNeedMore;
}

void SseParser::process_line(std::string_view line) {
  if (line.front() == ':') {
    return;  // comment
  }
  std::string_view field = line;
  std::string_view value;
  if (auto colon = line.find(':'); colon != std::string_view::npos) {
    field = line.substr(0, colon);
    value = line.substr(colon + 1);
    if (!value.empty() && value.front() == ' ') {
      value.remove_prefix(1);
    }
  }
  if (field == "data") {
    if (has_data_) {
      data_.push_back('\n');
    }
    data_.append(value);
    has_data_ = true;
  } else if (field == "event") {
    event_.assign(value);
  } else if (field == "id") {
    if (value.find('\0') == std::string_view::npos) {
      id_.assign(value);
    }
  }
}

void SseParser::fill(SseEvent& out, std::size_t block_end) {
  out.raw = std::string_view(buffer_).substr(block_start_, block_end - block_start_);
  // Hand the accumulated fields out by swapping into the "returned" slots so the views stay
  // valid until the next call, and the next block starts empty.
  out_data_.swap(data_);
  out_event_.swap(event_);
  out_id_.swap(id_);
  out.data = out_data_;
  out.event = out_event_;
  out.id = out_id_;
  out.has_data = has_data_;
  reset_block();
}

void SseParser::reset_block() {
  data_.clear();
  event_.clear();
  id_.clear();
  has_data_ = false;
}

void append_data_event(std::string& out, std::string_view payload) {
  std::size_t start = 0;
  while (true) {
    std::size_t nl = payload.find('\n', start);
    out.append("data: ");
    out.append(payload.substr(start, nl == std::string_view::npos ? nl : nl - start));
    out.push_back('\n');
    if (nl == std::string_view::npos) {
      break;
    }
    start = nl + 1;
  }
  out.push_back('\n');
}

}  // namespace sluice::codec
