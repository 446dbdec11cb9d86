// codec::SseParser on arbitrary bytes cut into fuzzed chunks (fuzz_support.h SplitInput; the
// flag bits pick the event size limit). Checks what sse.h promises: events have a non-empty
// raw block within the limit, single-line event and id fields, no data without a data line;
// pending_bytes() stays within the limit while more input is awaited; kTooLarge is final;
// finish() dispatches at most once; the raw blocks are the input in order, with only blank
// lines (and a leading BOM) between them; and the result does not depend on the chunking.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "codec/sse.h"
#include "fuzz_support.h"

namespace {

using sluice::codec::SseEvent;
using sluice::codec::SseParser;
using sluice::fuzz::check;

struct Block {
  std::string event, data, id, raw;
  bool has_data = false;
  bool operator==(const Block&) const = default;
};

struct Run {
  std::vector<Block> blocks;
  bool too_large = false;
};

void record(const SseEvent& ev, std::size_t limit, Run& run) {
  check(!ev.raw.empty(), "event with an empty raw block");
  check(ev.raw.size() <= limit, "event larger than max_event_bytes");
  check(ev.event.find_first_of("\r\n") == std::string_view::npos, "event name spans lines");
  check(ev.id.find_first_of("\r\n") == std::string_view::npos, "id spans lines");
  check(ev.has_data || ev.data.empty(), "data without a data line");
  run.blocks.push_back({std::string(ev.event), std::string(ev.data), std::string(ev.id),
                        std::string(ev.raw), ev.has_data});
}

void give_up(SseParser& parser, Run& run) {
  SseEvent ev;
  check(parser.next(ev) == SseParser::Status::kTooLarge, "kTooLarge did not stick (next)");
  check(parser.finish(ev) == SseParser::Status::kTooLarge, "kTooLarge did not stick (finish)");
  run.too_large = true;
}

Run parse(const sluice::fuzz::SplitInput& in, bool chunked, std::size_t limit) {
  SseParser parser(limit);
  SseEvent ev;
  Run run;
  auto feed = [&](std::string_view chunk) {
    if (run.too_large) {
      return;
    }
    parser.feed(chunk);
    while (true) {
      switch (parser.next(ev)) {
        case SseParser::Status::kEvent:
          record(ev, limit, run);
          continue;
        case SseParser::Status::kNeedMore:
          check(parser.pending_bytes() <= limit, "pending_bytes above the limit on kNeedMore");
          return;
        case SseParser::Status::kTooLarge:
          give_up(parser, run);
          return;
      }
    }
  };
  if (chunked) {
    in.for_each_chunk(feed);
  } else {
    feed(in.payload);
  }
  if (run.too_large) {
    return run;
  }
  switch (parser.finish(ev)) {
    case SseParser::Status::kEvent:
      record(ev, limit, run);
      check(parser.finish(ev) == SseParser::Status::kNeedMore, "finish() dispatched twice");
      break;
    case SseParser::Status::kNeedMore:
      break;
    case SseParser::Status::kTooLarge:
      give_up(parser, run);
      return run;
  }
  check(parser.pending_bytes() == 0, "bytes left over after finish()");
  check(parser.next(ev) == SseParser::Status::kNeedMore, "event after finish()");
  return run;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const sluice::fuzz::SplitInput in(data, size);
  // Small limits (16..496 bytes) exercise kTooLarge; flags 0 is the default of 1 MiB.
  const std::size_t limit = in.flags == 0 ? std::size_t{1} << 20 : std::size_t{in.flags} * 16;
  const Run chunked = parse(in, true, limit);
  const Run whole = parse(in, false, limit);
  check(chunked.too_large == whole.too_large, "kTooLarge depends on the chunking");
  check(chunked.blocks == whole.blocks, "events depend on the chunking");

  // The raw blocks, in order, are the input minus blank lines and a leading BOM.
  std::string_view rest = in.payload;
  if (rest.starts_with("\xEF\xBB\xBF")) {
    rest.remove_prefix(3);
  }
  for (const Block& b : whole.blocks) {
    rest.remove_prefix(std::min(rest.find_first_not_of("\r\n"), rest.size()));
    check(rest.starts_with(b.raw), "raw block is not the next bytes of the input", b.raw);
    rest.remove_prefix(b.raw.size());
  }
  check(whole.too_large || rest.find_first_not_of("\r\n") == std::string_view::npos,
        "input bytes not returned in any block", rest);
  return 0;
}
