#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace sluice::codec {

// One parsed Server-Sent Events block (the bytes up to and including a blank line).
// Views point into the parser's buffer and stay valid until the next feed(), next() or
// finish() call.
struct SseEvent {
  std::string_view event;  // value of the last `event:` line; empty when absent
  std::string_view data;   // `data:` lines joined with '\n' (WHATWG rule); may be empty
  std::string_view id;     // value of the last `id:` line
  std::string_view raw;    // the block exactly as received, terminating blank line included
  bool has_data = false;   // at least one `data:` line (a block of comments only has none)
};

// Incremental SSE parser (WHATWG HTML, "Parsing an event stream"): sans-I/O, fed
// arbitrary chunks, yields complete blocks. Lines end in CRLF, LF or CR; a CR that ends a
// chunk is held until the next byte shows whether an LF follows. A leading UTF-8 BOM is
// skipped. Unknown fields (and `retry:`) are kept in `raw` only, so a relay can forward
// blocks verbatim.
//
// Upstream bytes are untrusted: a block larger than `max_event_bytes` makes next() return
// kTooLarge and the parser stays in that state (the stream must be abandoned).
class SseParser {
 public:
  enum class Status { kEvent, kNeedMore, kTooLarge };

  explicit SseParser(std::size_t max_event_bytes = 1 << 20) : max_event_bytes_(max_event_bytes) {}

  // Appends bytes. Invalidates views from the previous event.
  void feed(std::string_view bytes);
  // Extracts the next complete block, if any.
  Status next(SseEvent& out);
  // End of input: a final block without its blank line is dispatched (the spec would drop
  // it; a relay prefers to see it). Returns kEvent at most once, then kNeedMore.
  Status finish(SseEvent& out);
  // Bytes buffered but not yet returned as a block.
  std::size_t pending_bytes() const { return buffer_.size() - block_start_; }

 private:
  Status parse(SseEvent& out, bool at_eof);
  void process_line(std::string_view line);
  void fill(SseEvent& out, std::size_t block_end);
  void reset_block();

  std::size_t max_event_bytes_;
  std::string buffer_;
  std::size_t block_start_ = 0;  // first byte of the block being parsed
  std::size_t scan_ = 0;         // next byte to scan for a line end
  std::size_t line_start_ = 0;
  bool bom_checked_ = false;
  bool too_large_ = false;
  // Fields of the block being parsed; offsets into buffer_ would not survive compaction
  // of multi-line data, so data is accumulated.
  std::string data_;
  std::string event_;
  std::string id_;
  bool has_data_ = false;
  // The fields of the block last returned (views in SseEvent point here).
  std::string out_data_;
  std::string out_event_;
  std::string out_id_;
};

// Appends one `data:` event to `out`: "data: <payload>\n\n". Payloads containing newlines
// are split over several data lines.
void append_data_event(std::string& out, std::string_view payload);

}  // namespace sluice::codec
